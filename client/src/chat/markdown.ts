/**
 * The agent's Markdown as HTML for the chat view. Nothing the agent writes may become markup of
 * its own: raw HTML is escaped (`html: false`), links may only be http(s), mailto or relative
 * (markdown-it's own check lets through any scheme but javascript/vbscript/file/data), images are
 * off (a remote image would report to its server that the chat was read; `![x](u)` stays a link),
 * and every link opens in a new tab without a handle on this one (rel=noopener).
 */
import MarkdownIt from "markdown-it";

/** Schemes a link may have; anything else renders as plain text. */
const ALLOWED_SCHEMES = new Set(["http", "https", "mailto"]);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/** A link markdown-it may render: no scheme (relative, #anchor, //host) or an allowed one. */
export function isSafeLink(url: string): boolean {
  // Browsers ignore whitespace and control characters inside a scheme ("java\tscript:").
  const scheme = SCHEME.exec(url.replace(/[\u0000-\u0020\u007f]/g, ""));
  return scheme === null || ALLOWED_SCHEMES.has(scheme[1]!.toLowerCase());
}

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
md.disable("image");
md.validateLink = isSafeLink;

const renderToken = md.renderer.renderToken.bind(md.renderer);
md.renderer.rules.link_open = (tokens, idx, options) => {
  const token = tokens[idx]!;
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  return renderToken(tokens, idx, options);
};

/** HTML for `text`; safe to assign to innerHTML. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
