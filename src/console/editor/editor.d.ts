// The browser modules import the editor as './editor.js', the name of its bundle in dist/console/; this gives
// that name the types of its source, so that tsconfig.browser.json checks their calls against editor.mjs itself.
export * from './editor.mjs';
