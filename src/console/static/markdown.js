// @ts-check
// A teacher's prompt, written in Markdown, drawn as DOM nodes: paragraphs,
// **strong**, *emphasis*, `code`, fenced code blocks and lists. Only these
// are understood; everything else (raw HTML included) stays literal text,
// since every piece becomes a text node (dom.js's h), never markup.

import { h } from './dom.js';

const INLINE = /(`[^`\n]+`|\*\*[^*\n]+\*\*|__[^_\n]+__|\*[^*\s][^*\n]*\*|_[^_\s][^_\n]*_)/;

/**
 * Inline marks of one block's text, as nodes.
 * @param {string} text
 * @returns {Array<Node | string>}
 */
export function inlineNodes(text) {
  return text
    .split(INLINE)
    .filter((part) => part !== '')
    .map((part) => {
      if (/^`[^`]+`$/.test(part)) return h('code', null, part.slice(1, -1));
      if (/^(\*\*|__).+\1$/.test(part)) return h('strong', null, inlineNodes(part.slice(2, -2)));
      if (/^([*_]).+\1$/.test(part)) return h('em', null, inlineNodes(part.slice(1, -1)));
      return part;
    });
}

const ITEM = /^\s{0,3}([-*+]|\d{1,3}[.)])\s+(.*)$/;

/**
 * @param {string[]} lines
 * @returns {HTMLElement}
 */
function listNode(lines) {
  const ordered = /^\s{0,3}\d/.test(lines[0]);
  const items = [];
  for (const line of lines) {
    const item = ITEM.exec(line);
    if (item !== null) items.push(item[2]);
    else if (items.length > 0) items[items.length - 1] += ` ${line.trim()}`;
  }
  return h(
    ordered ? 'ol' : 'ul',
    null,
    items.map((item) => h('li', null, inlineNodes(item))),
  );
}

/**
 * The prompt as an array of block nodes.
 * @param {unknown} source
 * @returns {HTMLElement[]}
 */
export function markdownNodes(source) {
  const blocks = [];
  const lines = String(source ?? '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  /** @type {string[]} */
  let paragraph = [];
  const endParagraph = () => {
    if (paragraph.length === 0) return;
    const block = paragraph;
    paragraph = [];
    if (ITEM.test(block[0])) blocks.push(listNode(block));
    else blocks.push(h('p', null, inlineNodes(block.map((line) => line.trim()).join(' '))));
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*```/.test(line)) {
      endParagraph();
      const code = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i]);
      blocks.push(h('pre', { class: 'prompt-code' }, h('code', null, code.join('\n'))));
    } else if (line.trim() === '') {
      endParagraph();
    } else if (/^#{1,6}\s/.test(line)) {
      endParagraph();
      // Headings inside a prompt stay below the view's own: bold paragraphs.
      blocks.push(h('p', null, h('strong', null, inlineNodes(line.replace(/^#{1,6}\s+/, '')))));
    } else {
      // A list that starts right under a paragraph line still starts a list.
      if (ITEM.test(line) && paragraph.length > 0 && !ITEM.test(paragraph[0])) endParagraph();
      paragraph.push(line);
    }
  }
  endParagraph();
  return blocks;
}
