import { describe, expect, it } from "vitest";
import { isSafeLink, renderMarkdown } from "./markdown.ts";

/** Markup markdown-it produces for Markdown itself; nothing else may appear. */
const ALLOWED_TAGS = new Set(["p", "a", "em", "strong", "s", "code", "pre", "blockquote", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "br", "table", "thead", "tbody", "tr", "th", "td"]);
const ALLOWED_ATTRIBUTES = new Set(["href", "title", "target", "rel", "class", "start", "style"]);
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g;
const CHAT_PAGE = "https://webmux.example/s/abcd1234/chat";
const SAFE_PROTOCOLS = ["https:", "http:", "mailto:"];
const decodeEntities = (value: string) => value.replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">");
const ATTRIBUTE = /\s+([a-zA-Z-]+)="([^"<>]*)"/g;

type Tag = { name: string; closing: boolean; attributes: Record<string, string> };

/** Every tag of `html` with its attributes; throws on markup a browser could read differently. */
function tagsOf(html: string): Tag[] {
  const tags: Tag[] = [];
  const text = html.replace(TAG, (_all, slash: string, name: string, rest: string) => {
    const attributes: Record<string, string> = {};
    const leftover = rest.replace(ATTRIBUTE, (_a, key: string, value: string) => {
      attributes[key] = value;
      return "";
    });
    if (leftover.trim() !== "" && leftover.trim() !== "/") throw new Error(`unparsed attribute text in <${name}${rest}>`);
    tags.push({ name: name.toLowerCase(), closing: slash === "/", attributes });
    return "";
  });
  // Outside the tags, a "<" is always escaped: no other element can start.
  if (text.includes("<")) throw new Error(`raw "<" outside the tags: ${text}`);
  return tags;
}

function expectInert(html: string): Tag[] {
  const tags = tagsOf(html);
  for (const tag of tags) {
    expect(ALLOWED_TAGS, `<${tag.name}> in ${html}`).toContain(tag.name);
    for (const [key, value] of Object.entries(tag.attributes)) {
      expect(ALLOWED_ATTRIBUTES, `${key} on <${tag.name}>`).toContain(key);
      if (key === "href") {
        expect(isSafeLink(value), `href ${value}`).toBe(true);
        // What counts is what the browser makes of it on the chat page.
        expect(SAFE_PROTOCOLS, `href ${value}`).toContain(new URL(decodeEntities(value), CHAT_PAGE).protocol);
      }
      if (key === "style") expect(value).toMatch(/^text-align:(left|right|center)$/);
    }
  }
  return tags;
}

const links = (html: string) => expectInert(html).filter((t) => t.name === "a" && !t.closing);

describe("renderMarkdown", () => {
  it("escapes HTML the agent writes: an <img onerror> or a <script> is text", () => {
    for (const attack of ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "<a href=\"javascript:alert(1)\">x</a>", "<svg onload=alert(1)>", "<iframe src=//evil>"]) {
      const html = renderMarkdown(`look: ${attack}`);
      expectInert(html);
      expect(html).toContain("&lt;");
      expect(html).not.toMatch(/<(img|script|svg|iframe)/i);
    }
  });

  it("renders javascript:, data: and other schemes as text, never as a link to them", () => {
    const attacks = [
      "[click](javascript:alert(1))",
      "[click](JaVaScRiPt:alert(1))",
      "[click](<javascript:alert(1)>)",
      "[click](java&#x09;script:alert(1))",
      "[click](&#106;avascript:alert(1))",
      "[click](data:text/html;base64,PHNjcmlwdD4=)",
      "[click](vbscript:msgbox)",
      "[click](intent://x#Intent;end)",
      "<javascript:alert(1)>",
      "[click][ref]\n\n[ref]: javascript:alert(1)",
      "![pic](javascript:alert(1))",
      "javascript:alert(1)",
    ];
    for (const attack of attacks) {
      // expectInert (in links) proved every href is http(s) or mailto as the page resolves it; what
      // survives of these is at most a relative path on webmux's own origin ("java%09script:…").
      const hrefs = links(renderMarkdown(attack)).map((a) => new URL(decodeEntities(a.attributes.href!), CHAT_PAGE));
      expect(hrefs.filter((url) => url.origin !== new URL(CHAT_PAGE).origin), attack).toEqual([]);
    }
    expect(links(renderMarkdown("[click](javascript:alert(1))"))).toEqual([]);
    expect(renderMarkdown("[click](javascript:alert(1))")).toContain("[click](javascript:alert(1))");
  });

  it("opens links in a new tab without a handle on this one", () => {
    const html = renderMarkdown("see [the docs](https://example.com/a?b=1) or https://example.org/x and mailto:me@example.com");
    const hrefs = links(html).map((a) => a.attributes);
    expect(hrefs.map((a) => a.href)).toEqual(["https://example.com/a?b=1", "https://example.org/x", "mailto:me@example.com"]);
    for (const a of hrefs) expect(a).toMatchObject({ target: "_blank", rel: "noopener noreferrer" });
  });

  it("keeps a link title and a fence's language from breaking out of their attribute", () => {
    const html = renderMarkdown('[a](https://x.example "\\"><img src=x onerror=alert(1)>")\n\n```js" onmouseover="alert(1)\nlet x = "<b>";\n```');
    expectInert(html);
    expect(html).not.toMatch(/\sonmouseover=/);
  });

  it("renders code blocks as <pre><code>, their content escaped", () => {
    const html = renderMarkdown("Run:\n\n```sh\nmake && echo '<done>'\n```\n\nand `npm test`.");
    const tags = expectInert(html).map((t) => t.name);
    expect(tags).toEqual(["p", "p", "pre", "code", "code", "pre", "p", "code", "code", "p"]);
    expect(html).toContain('<pre><code class="language-sh">make &amp;&amp; echo \'&lt;done&gt;\'\n</code></pre>');
  });

  it("images stay links the user can choose to open", () => {
    const html = renderMarkdown("![chart](https://example.com/chart.png)");
    expect(html).not.toContain("<img");
    expect(links(html).map((a) => a.attributes.href)).toEqual(["https://example.com/chart.png"]);
  });
});
