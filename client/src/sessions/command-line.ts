/**
 * The command field of "New session" as an argv: words split on blanks, with '…' and "…" quoting
 * and backslash escapes, the way a shell would read a simple command. No expansion of any kind.
 */
export type SplitResult = { argv: string[] } | { error: string };

export function splitCommandLine(line: string): SplitResult {
  const argv: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (c === "\\") {
      const next = line[i + 1];
      if (next === undefined) return { error: "The command ends with a lone backslash." };
      // Inside double quotes a backslash only escapes what double quotes would treat specially.
      if (quote === '"' && !'"\\$`'.includes(next)) word += c;
      word += next;
      inWord = true;
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) argv.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote !== null) return { error: `A ${quote === "'" ? "single" : "double"} quote is not closed.` };
  if (inWord) argv.push(word);
  return { argv };
}
