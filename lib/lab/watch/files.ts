// Seeing that a watched file changed, for `typelm run --watch`. Each folder that holds a watched file
// is watched (fs.watch on the folder, not on the file): an editor that saves by writing a new file and
// renaming it over the old one replaces the file's inode, which a watch on the file would lose, while
// the folder's watch reports the new file under the same name. Events are debounced (an editor writes
// a file in several steps), and then each watched file's identity (inode, size, modification time) is
// compared with what it was when the last run started: events that changed nothing watched (an
// editor's swap file beside it) start nothing.
import { readdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, join } from "node:path";

/** What to watch: single files, and dataset folders whose data files (any of them, new ones too) count. */
export interface WatchTargets {
  files: readonly string[];
  /** A dataset folder: its train/dev/test/data .jsonl or .csv files and signature.json. */
  folders: readonly string[];
}

/** A dataset folder's files that a run reads (see loadDataset). */
const DATA_FILE = /^(?:(?:train|dev|test|data)\.(?:jsonl|csv)|signature\.json)$/i;

/** A file's identity at one moment: "missing", or its inode, size and modification time. */
function identity(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return s.isFile() ? `${s.ino}:${s.size}:${s.mtimeNs}` : "not a file";
  } catch {
    return "missing";
  }
}

/**
 * Calls `onChange` with the watched files that changed since `snapshot()`, once the folders have been
 * quiet for `debounceMs` after an event. Changing the targets re-arms the folders' watches.
 */
export class ChangeWatcher {
  readonly #onChange: (changed: string[]) => void;
  readonly #debounceMs: number;
  readonly #watchers = new Map<string, FSWatcher>();
  #targets: WatchTargets = { files: [], folders: [] };
  #seen = new Map<string, string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(onChange: (changed: string[]) => void, debounceMs = 300) {
    this.#onChange = onChange;
    this.#debounceMs = debounceMs;
  }

  /** Watches these targets from now on (folders no longer needed are let go, new ones watched). */
  watch(targets: WatchTargets): void {
    if (this.#closed) return;
    this.#targets = { files: [...new Set(targets.files)], folders: [...new Set(targets.folders)] };
    const folders = new Set([...this.#targets.files.map((f) => dirname(f)), ...this.#targets.folders]);
    for (const [folder, watcher] of this.#watchers) {
      if (!folders.has(folder)) {
        watcher.close();
        this.#watchers.delete(folder);
      }
    }
    for (const folder of folders) if (!this.#watchers.has(folder)) this.#arm(folder);
    // A file watched from now on (a new import, the dataset once known) is measured from now.
    for (const file of this.files()) if (!this.#seen.has(file)) this.#seen.set(file, identity(file));
  }

  /** The files watched now: each target file, and each data file now in a watched dataset folder. */
  files(): string[] {
    const inFolders = this.#targets.folders.flatMap((folder) => {
      try {
        return readdirSync(folder).filter((name) => DATA_FILE.test(name)).map((name) => join(folder, name));
      } catch {
        return [];
      }
    });
    return [...new Set([...this.#targets.files, ...inFolders])];
  }

  /** Notes every watched file as it is now: what the next change is measured against. */
  snapshot(): void {
    this.#seen = new Map(this.files().map((f) => [f, identity(f)]));
  }

  /** Stops watching; no call of `onChange` follows. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #arm(folder: string): void {
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, { persistent: true }, (_event, name) => {
        if (name === null || this.#relevant(folder, String(name))) this.#schedule();
      });
    } catch {
      return; // a folder that does not exist (an import not written yet): the next re-arm tries again
    }
    // A folder removed or made unreadable: let it go; the next run's re-arm watches it again if it is back.
    watcher.on("error", () => {
      watcher.close();
      if (this.#watchers.get(folder) === watcher) this.#watchers.delete(folder);
      this.#schedule();
    });
    this.#watchers.set(folder, watcher);
  }

  #relevant(folder: string, name: string): boolean {
    if (this.#targets.folders.includes(folder) && DATA_FILE.test(basename(name))) return true;
    return this.#targets.files.some((f) => dirname(f) === folder && basename(f) === name);
  }

  #schedule(): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed) return;
      const now = new Map(this.files().map((f) => [f, identity(f)]));
      const changed = [...new Set([...now.keys(), ...this.#seen.keys()])].filter((f) => now.get(f) !== this.#seen.get(f));
      if (changed.length > 0) this.#onChange(changed);
    }, this.#debounceMs);
  }
}
