// Preloaded (`node --import`) by tests of the server's last line of defence: SIGUSR2 makes the
// process throw from a callback (or, with CRASH_KIND=rejection, reject a promise nobody awaits),
// as a bug nothing catches would.
process.on("SIGUSR2", () => {
  setImmediate(() => {
    if (process.env.CRASH_KIND === "rejection") void Promise.reject(new Error("a rejection nothing handles"));
    else throw new Error("an exception nothing catches");
  });
});
