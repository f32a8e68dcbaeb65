/** Release the C library's free heap pages to the OS (glibc malloc_trim(0)); true when some were released. */
export declare function trimFreedMemory(): boolean;
