/** Set FD_CLOEXEC on one descriptor; throws on a bad one. */
export declare function setCloseOnExec(fd: number): void;
/** Set FD_CLOEXEC on every open descriptor from `lowest` up. */
export declare function setCloseOnExecFrom(lowest: number): void;
