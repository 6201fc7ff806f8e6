// Runs a Python script in Pyodide under Node, offline, with bpetite's source on sys.path:
//
//     node tests/pyodide/run.mjs PYODIDE_DIR SRC_DIR SCRIPT [ARG...]
//
// PYODIDE_DIR is the npm package `pyodide` (node_modules/pyodide, as `npm ci` installs it
// from this folder's package-lock.json), which ships the interpreter and the standard
// library. Nothing is fetched: any fetch (of a package from Pyodide's CDN, say) throws,
// and nothing is installed with micropip; SRC_DIR (the repository's src/) is mounted as
// it is. The script runs with sys.argv = [SCRIPT, ARG...]; an exception in it exits 1.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, srcDir, script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node run.mjs PYODIDE_DIR SRC_DIR SCRIPT [ARG...]");
  process.exit(2);
}
globalThis.fetch = async (url) => {
  throw new Error(`the offline check tried to fetch ${url}`);
};

const pyodideModule = pathToFileURL(path.join(path.resolve(pyodideDir), "pyodide.mjs"));
const { loadPyodide } = await import(pyodideModule.href);
const pyodide = await loadPyodide({ indexURL: path.resolve(pyodideDir) + path.sep });
pyodide.FS.mkdirTree("/bpetite/src");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.resolve(srcDir) }, "/bpetite/src");
pyodide.globals.set("script_argv", pyodide.toPy([script, ...args]));
try {
  // No bytecode is written: the mounted folder is the host's working tree.
  pyodide.runPython(
    "import sys; sys.dont_write_bytecode = True; sys.path.insert(0, '/bpetite/src'); " +
      "sys.argv = list(script_argv)",
  );
  await pyodide.runPythonAsync(await readFile(script, "utf8"), { filename: script });
} catch (error) {
  console.error(String(error.message ?? error));
  process.exit(1);
}
