/** A non-blocking AF_UNIX SOCK_SEQPACKET socket listening at `path`, created 0600. */
export declare function listen(path: string): number;
/** A connected non-blocking socket from a listening one, or -1 when none waits. */
export declare function accept(fd: number): number;
/** A non-blocking SOCK_SEQPACKET socket connected to `path`. */
export declare function connect(path: string): number;
/** The uid of the process at the other end of a Unix socket (SO_PEERCRED). */
export declare function peerUid(fd: number): number;
/** Send one message of 1 B–64 KiB with up to 16 descriptors attached; the caller's stay open. */
export declare function sendFds(fd: number, fds: number[], bytes: Uint8Array): number;
/** One received message. `dropped`: it did not fit or carried other control data; its descriptors were closed. */
export type ReceivedMessage = { data: Buffer; fds: number[]; dropped: boolean };
/** The next message, null when none waits, false at the end of the connection. */
export declare function receiveFds(fd: number): ReceivedMessage | null | false;
export declare function closeFd(fd: number): void;
export type Watch = { readonly __watch: unique symbol };
/** Call back (on the event loop) whenever `fd` is readable; status < 0 is a poll error. */
export declare function watchReadable(fd: number, callback: (status: number) => void): Watch;
export declare function unwatch(watch: Watch): void;
