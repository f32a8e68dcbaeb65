// Test fixture: a program that asks the terminal every kind of device query — DSR (cursor position,
// status), DA1/DA2/DA3, DECRQM (DEC and ANSI modes), OSC 10/11 colours, the colour-scheme query,
// DECRQSS, kitty keyboard flags, XTVERSION, a window report — once at start and again on SIGUSR1,
// then shows everything it reads from its terminal as one `got:<hex>` line per read.
const QUERIES = "\x1b[6n\x1b[5n\x1b[c\x1b[>c\x1b[=c\x1b[?2004$p\x1b[4$p\x1b]10;?\x07\x1b]11;?\x1b\\\x1b[?996n\x1bP$qm\x1b\\\x1b[?u\x1b[>q\x1b[14t\x1b[?6n";
let asked = 0;
const ask = () => process.stdout.write(`asking${QUERIES}\r\nQUERIES-ASKED-${++asked}\r\n`);
process.stdin.setRawMode(true);
process.stdin.on("data", (d) => process.stdout.write(`got:${d.toString("hex")}\r\n`));
process.on("SIGUSR1", ask);
ask();
