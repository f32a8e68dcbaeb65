// Test fixture: an Ink app shaped like a coding agent at work (what Claude Code is built with): a
// transcript printed once through <Static> (never redrawn, so a late client has it only from the
// snapshot), a task list that re-renders (the task being worked on has a spinner, finished ones move
// below it with a tick), a text input in a bordered box and a status line. Enter starts work on the typed task; the
// spinner turns while it works and stops only when Tab finishes the task, so a test can compare
// screens at a point where no more output comes. The status line counts the spinner's frames per
// task ("<task> · tick N"), so a test can wait for the spinner to have turned. Plain
// React.createElement so it runs without a JSX build. Prints "AGENT-READY" once drawn.
import React, { useEffect, useState } from "react";
import { Box, Static, Text, render, useInput } from "ink";

const h = React.createElement;
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** How often the spinner turns (Ink's own spinners use 80 ms). */
const SPINNER_MS = 80;

function App() {
  const [typed, setTyped] = useState("");
  const [tasks, setTasks] = useState([{ id: 0, text: "read the issue", done: true }]);
  const [tick, setTick] = useState(0);
  const [transcript, setTranscript] = useState([{ id: 0, text: "● read the issue", color: "cyan" }]);
  const log = (text, color) => setTranscript((all) => [...all, { id: all.length, text, color }]);
  const working = tasks.find((t) => !t.done);
  useEffect(() => {
    if (!working) return undefined;
    const timer = setInterval(() => setTick((n) => n + 1), SPINNER_MS);
    return () => clearInterval(timer);
  }, [working?.id]);
  useInput((input, key) => {
    if (key.tab) {
      if (working) log(`✔ finished ${working.text} after ${tick} ticks`, "green");
      setTasks((all) => {
        const current = all.find((t) => !t.done);
        return current ? [...all.filter((t) => t !== current), { ...current, done: true }] : all;
      });
    } else if (key.return) {
      if (typed === "" || working) return;
      setTick(0);
      log(`● started ${typed}`, "cyan");
      setTasks((all) => [{ id: all.length, text: typed, done: false }, ...all]);
      setTyped("");
    } else if (key.backspace || key.delete) setTyped((t) => t.slice(0, -1));
    else if (!key.ctrl && !key.meta && input) setTyped((t) => t + input);
  });
  const done = tasks.filter((t) => t.done).length;
  return h(
    Box,
    { flexDirection: "column" },
    h(Static, { items: transcript }, (line) => h(Text, { key: line.id, color: line.color, bold: true }, line.text)),
    ...tasks.map((task) =>
      h(
        Text,
        { key: task.id, color: task.done ? "green" : "yellow" },
        task.done ? `✔ ${task.text}` : `${SPINNER[tick % SPINNER.length]} ${task.text}…`,
      ),
    ),
    h(Box, { borderStyle: "round", paddingX: 1 }, h(Text, null, "> ", typed, h(Text, { inverse: true }, " "))),
    h(
      Text,
      { dimColor: true },
      `AGENT-READY  ${working ? `${working.text} · tick ${tick}` : "idle"}  ${done} done  ${typed.length} chars`,
    ),
  );
}

render(h(App));
