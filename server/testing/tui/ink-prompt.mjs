// Test fixture: an Ink app shaped like a coding agent's prompt (what Claude Code is built with): a
// transcript, then a full-width bordered input box that redraws as the user types, and a status line.
// Plain React.createElement so it runs without a JSX build. Prints "INK-READY" once drawn.
import React, { useState } from "react";
import { Box, Static, Text, render, useInput } from "ink";

const h = React.createElement;
const transcript = Array.from({ length: Number(process.env.INK_LINES ?? 5) }, (_, i) => ({ id: i, text: `transcript line ${i + 1}` }));

function App() {
  const [typed, setTyped] = useState("");
  useInput((input, key) => {
    if (key.backspace || key.delete) setTyped((t) => t.slice(0, -1));
    else if (!key.ctrl && !key.meta && input) setTyped((t) => t + input);
  });
  return h(
    Box,
    { flexDirection: "column" },
    h(Static, { items: transcript }, (item) => h(Text, { key: item.id }, item.text)),
    h(Box, { borderStyle: "round", paddingX: 1 }, h(Text, null, `> ${typed}`)),
    h(Text, { dimColor: true }, `INK-READY  ? for shortcuts  ${typed.length} chars`),
  );
}

render(h(App));
