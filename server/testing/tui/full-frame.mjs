// Test fixture: a TUI shaped like opencode's: the alternate screen, and a renderer that paints the
// whole frame (every cell, by absolute position) at start and again only when the terminal's size
// changes, never on its own. Its right border touches the last column; its status line is the last
// row. Prints nothing else; "FRAME-READY" is in the status line.
const out = process.stdout;

function paint() {
  const cols = out.columns;
  const rows = out.rows;
  let frame = "\x1b[?25l";
  for (let row = 1; row <= rows; row++) {
    let line;
    if (row === 1) line = "┌" + "─".repeat(cols - 2) + "┐";
    else if (row === rows - 1) line = "└" + "─".repeat(cols - 2) + "┘";
    else if (row === rows) line = `FRAME-READY ${cols}x${rows}`.padEnd(cols - 8) + "\x1b[7m status \x1b[m";
    else {
      const text = row === 2 ? " session: fixture" : row === 3 ? ` width ${cols}` : ` row ${row}`;
      line = "│" + text.padEnd(cols - 2).slice(0, cols - 2) + "│";
    }
    frame += `\x1b[${row};1H` + line;
  }
  out.write(frame);
}

out.write("\x1b[?1049h\x1b[H\x1b[2J");
paint();
out.on("resize", paint);
process.stdin.setRawMode?.(true);
process.stdin.resume();
process.stdin.on("data", (d) => {
  if (d.includes(0x71)) {
    out.write("\x1b[?25h\x1b[?1049l");
    process.exit(0);
  }
});
