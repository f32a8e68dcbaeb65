/** Set FD_CLOEXEC on one descriptor; throws on a bad one. */
export declare function setCloseOnExec(fd: number): void;
/** Set FD_CLOEXEC on every open descriptor from `lowest` up. */
export declare function setCloseOnExecFrom(lowest: number): void;
/** One write(2) of the bytes: how many it took, or -errno (EAGAIN when the descriptor is full). */
export declare function writeSome(fd: number, bytes: Uint8Array): number;
/** One non-blocking send(2) on a socket, never raising SIGPIPE: how many it took, or -errno. */
export declare function sendSome(fd: number, bytes: Uint8Array): number;
