import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The build writes two files with fixed names, app.js and app.css, into
// ../dist, which package web embeds; the Go handler versions them by content
// hash (?v=), so the names need no hash and the output is the same for the
// same sources and lock file (CI rebuilds and compares).
export default defineConfig({
  plugins: [react()],
  // react-diff-view imports CommonJS lodash whole; its ES build lets the
  // bundle keep only the few functions used.
  resolve: { alias: { lodash: "lodash-es" } },
  base: "./",
  build: {
    outDir: "../dist",
    emptyOutDir: true,
    cssCodeSplit: false,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: false,
    reportCompressedSize: false,
    rolldownOptions: {
      input: "src/main.tsx",
      output: {
        entryFileNames: "app.js",
        chunkFileNames: "app-[name].js",
        assetFileNames: "app[extname]",
      },
    },
  },
});
