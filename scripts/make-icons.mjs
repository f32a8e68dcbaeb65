#!/usr/bin/env node
// Draws the webmux icon (a ">_" prompt on a dark tile) into public/ as SVG and PNG,
// from one geometry, with no dependency beyond node:zlib. The outputs are committed;
// run `node scripts/make-icons.mjs` again after changing the design.
import { writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const PUBLIC_DIR = fileURLToPath(new URL("../public/", import.meta.url));

/** The design is drawn on a 512-unit square, the largest size a manifest asks for. */
const VIEW = 512;
/** Corner radius of the tile for "any"-purpose icons; maskable icons are full-bleed. */
const TILE_RADIUS = 112;
const TILE_COLOUR = "#111827";
const GLYPH_COLOUR = "#34d399";
/** Stroke width of the ">_" at icon sizes. */
const STROKE = 44;
/** Thicker strokes keep the favicon legible at 16 px. */
const FAVICON_STROKE = 60;
/** Maskable icons may be cropped to a circle of 40 % of their size: shrink the glyph into it. */
const MASKABLE_GLYPH_SCALE = 0.8;
/** Samples per pixel edge for anti-aliasing (4 × 4 = 16 samples a pixel). */
const SUPERSAMPLE = 4;

/** Stroked polylines with round caps and joins: a union of capsules. */
const GLYPH = [
  [
    [148, 170],
    [268, 256],
    [148, 342],
  ],
  [
    [296, 340],
    [370, 340],
  ],
];

function svg({ stroke, radius }) {
  const paths = GLYPH.map((line) => `M${line.map(([x, y]) => `${x} ${y}`).join("L")}`).join("");
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${VIEW} ${VIEW}">`,
    `<rect width="${VIEW}" height="${VIEW}" rx="${radius}" fill="${TILE_COLOUR}"/>`,
    `<path d="${paths}" fill="none" stroke="${GLYPH_COLOUR}" stroke-width="${stroke}" stroke-linecap="round" stroke-linejoin="round"/>`,
    `</svg>`,
    ``,
  ].join("\n");
}

function segmentDistance(px, py, [ax, ay], [bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - ax - t * dx, py - ay - t * dy);
}

function inGlyph(x, y, stroke, scale) {
  // Scale around the centre so the maskable glyph stays centred.
  const gx = VIEW / 2 + (x - VIEW / 2) / scale;
  const gy = VIEW / 2 + (y - VIEW / 2) / scale;
  const half = stroke / 2;
  return GLYPH.some((line) => line.slice(1).some((end, i) => segmentDistance(gx, gy, line[i], end) <= half));
}

function inTile(x, y, radius) {
  const cx = Math.min(Math.max(x, radius), VIEW - radius);
  const cy = Math.min(Math.max(y, radius), VIEW - radius);
  return x >= 0 && y >= 0 && x <= VIEW && y <= VIEW && Math.hypot(x - cx, y - cy) <= radius;
}

const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

/** RGBA pixels, straight alpha, from supersampled coverage; geometry stays in VIEW units. */
function rasterize(size, { radius, scale }) {
  const tile = rgb(TILE_COLOUR);
  const glyph = rgb(GLYPH_COLOUR);
  const pixels = Buffer.alloc(size * size * 4);
  const unit = VIEW / size / SUPERSAMPLE;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let covered = 0;
      let glyphCovered = 0;
      for (let sy = 0; sy < SUPERSAMPLE; sy++) {
        for (let sx = 0; sx < SUPERSAMPLE; sx++) {
          const x = (px * SUPERSAMPLE + sx + 0.5) * unit;
          const y = (py * SUPERSAMPLE + sy + 0.5) * unit;
          if (!inTile(x, y, radius)) continue;
          covered++;
          if (inGlyph(x, y, STROKE, scale)) glyphCovered++;
        }
      }
      const at = (py * size + px) * 4;
      const mix = covered === 0 ? 0 : glyphCovered / covered;
      for (let c = 0; c < 3; c++) pixels[at + c] = Math.round(tile[c] + (glyph[c] - tile[c]) * mix);
      pixels[at + 3] = Math.round((255 * covered) / SUPERSAMPLE ** 2);
    }
  }
  return pixels;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function png(size, pixels) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bits per channel
  header[9] = 6; // RGBA
  // Every scanline gets filter type 0 (none); deflate does the compressing.
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) pixels.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const outputs = {
  "icon.svg": svg({ stroke: STROKE, radius: TILE_RADIUS }),
  "favicon.svg": svg({ stroke: FAVICON_STROKE, radius: TILE_RADIUS }),
  "icon-192.png": png(192, rasterize(192, { radius: TILE_RADIUS, scale: 1 })),
  "icon-512.png": png(512, rasterize(512, { radius: TILE_RADIUS, scale: 1 })),
  "icon-maskable-512.png": png(512, rasterize(512, { radius: 0, scale: MASKABLE_GLYPH_SCALE })),
  // iOS rounds the corners itself and shows transparency as black: full-bleed.
  "apple-touch-icon.png": png(180, rasterize(180, { radius: 0, scale: 1 })),
};

for (const [name, content] of Object.entries(outputs)) {
  writeFileSync(PUBLIC_DIR + name, content);
  console.log(`wrote public/${name} (${content.length} bytes)`);
}
