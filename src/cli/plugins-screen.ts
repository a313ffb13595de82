import {
  createPrompt,
  isDownKey,
  isEnterKey,
  isSpaceKey,
  isUpKey,
  type KeypressEvent,
  useKeypress,
  usePagination,
  useState,
} from "@inquirer/core";
import type { ScreenChanges, ScreenChoices, ScreenModel, ScreenProvider } from "../app/plugins-screen.js";
import type { HomePaths } from "../core/paths.js";
import type { ProviderKind } from "../runtime/registries.js";
import { terminalIo } from "./io.js";
import { err, out, style } from "./output.js";

/** A selectable line of the screen; headers are not rows. */
type Row = { type: "plugin"; index: number } | { type: "provider"; index: number };

/** Which provider's picker is open, and the highlighted choice in it. */
interface Picker {
  provider: number;
  active: number;
}

const HELP = "↑↓ navigate  SPACE toggle  ENTER configure/confirm  ESC done";

function rowsOf(model: ScreenModel): Row[] {
  return [
    ...model.general.map((_, index) => ({ type: "plugin" as const, index })),
    ...model.providers.map((_, index) => ({ type: "provider" as const, index })),
  ];
}

function choiceLabel(p: ScreenProvider, value: string | null): string {
  return p.choices.find((c) => c.value === value)?.label ?? value ?? "(built-in)";
}

/** Lines of the list shown at once; a terminal that reports no size (0 rows) shows them all. */
function pageSize(rows: number): number {
  const height = process.stdout.rows;
  return height ? Math.max(8, height - 4) : rows * 3 + 4;
}

function renderPicker(model: ScreenModel, picker: Picker, current: string | null): string {
  const p = model.providers[picker.provider]!;
  const lines = p.choices.map((c, i) => {
    const mark = i === picker.active ? "→ " : "  ";
    const now = c.value === current ? style.dim(" (current)") : "";
    return `${mark}${i === picker.active ? style.bold(c.label) : c.label}${now}`;
  });
  return [`${style.bold(p.label)}  ${style.dim(`${p.select} · ↑↓ move  ENTER choose  ESC back`)}`, "", ...lines].join(
    "\n",
  );
}

interface ScreenState {
  enabled: Set<string>;
  selections: Map<ProviderKind, string | null>;
}

/** The main list: general plugins as checkboxes, then each provider kind with its current choice. */
function renderList(model: ScreenModel, rows: Row[], active: number, st: ScreenState, note: string): string {
  const body = usePagination({
    items: rows,
    active,
    pageSize: pageSize(rows.length),
    loop: false,
    renderItem: ({ item, isActive }) => {
      const arrow = isActive ? "→ " : "  ";
      const heading = (title: string) => `${style.bold(title)}\n`;
      if (item.type === "plugin") {
        const p = model.general[item.index]!;
        const box = st.enabled.has(p.key) ? "[✓]" : "[ ]";
        const desc = p.description ? ` — ${p.description}` : "";
        const tags = `${p.bundled ? style.dim(" [bundled]") : ""}${p.locked ? style.yellow(" [managed]") : ""}`;
        const line = `${arrow}${box} ${isActive ? style.bold(p.key) : p.key}${desc}${tags}`;
        return item.index === 0 ? heading("General Plugins") + line : line;
      }
      const p = model.providers[item.index]!;
      const choice = choiceLabel(p, st.selections.get(p.kind) ?? p.current);
      const line = `${arrow}${p.label.padEnd(18)} ▸ ${choice}${p.locked ? style.yellow(" [managed]") : ""}`;
      return item.index === 0 ? `\n${heading("Provider Plugins")}${line}` : line;
    },
  });
  const empty = model.general.length ? "" : `${style.bold("General Plugins")}\n  (no plugins installed)\n`;
  return [`${style.bold("Plugins")}  ${style.dim(HELP)}`, "", empty + body, note ? `\n${note}` : ""].join("\n");
}

/**
 * The interactive `hermes plugins` screen, on @inquirer/core's prompt runtime (keypress parsing, rendering and
 * pagination are the library's). Resolves with the choices, or null when the person pressed Ctrl-C.
 */
const screenPrompt = createPrompt<ScreenChoices, { model: ScreenModel }>((config, done) => {
  const { model } = config;
  const rows = rowsOf(model);
  const [active, setActive] = useState(0);
  const [picker, setPicker] = useState<Picker | null>(null);
  const [note, setNote] = useState("");
  const [st, setSt] = useState<ScreenState>(() => ({
    enabled: new Set(model.general.filter((p) => p.enabled).map((p) => p.key)),
    selections: new Map(),
  }));
  const finish = () => done({ enabled: st.enabled, selections: st.selections });

  useKeypress((key: KeypressEvent) => {
    setNote("");
    if (picker) return pickerKey(key);
    const row = rows[active];
    if (isUpKey(key) || isDownKey(key)) {
      const next = active + (isUpKey(key) ? -1 : 1);
      if (next >= 0 && next < rows.length) setActive(next);
    } else if (key.name === "escape") finish();
    else if (row?.type === "plugin" && (isSpaceKey(key) || isEnterKey(key))) {
      const p = model.general[row.index]!;
      if (isEnterKey(key)) return finish();
      if (p.locked) return setNote(style.yellow(`${p.key}: ${p.locked}`));
      const enabled = new Set(st.enabled);
      if (enabled.has(p.key)) enabled.delete(p.key);
      else enabled.add(p.key);
      setSt({ ...st, enabled });
    } else if (row?.type === "provider" && isEnterKey(key)) {
      const p = model.providers[row.index]!;
      if (p.locked) return setNote(style.yellow(`${p.select}: ${p.locked}`));
      const now = st.selections.get(p.kind) ?? p.current;
      setPicker({
        provider: row.index,
        active: Math.max(
          0,
          p.choices.findIndex((c) => c.value === now),
        ),
      });
    }
  });

  function pickerKey(key: KeypressEvent): void {
    const p = model.providers[picker!.provider]!;
    if (isUpKey(key) || isDownKey(key)) {
      const next = picker!.active + (isUpKey(key) ? -1 : 1);
      if (next >= 0 && next < p.choices.length) setPicker({ ...picker!, active: next });
    } else if (key.name === "escape") setPicker(null);
    else if (isEnterKey(key)) {
      setSt({ ...st, selections: new Map(st.selections).set(p.kind, p.choices[picker!.active]!.value) });
      setPicker(null);
    }
  }

  // The list renders on every pass so the pagination hook is called in the same order each time.
  const list = renderList(model, rows, active, st, note);
  if (!picker) return list;
  const p = model.providers[picker.provider]!;
  return renderPicker(model, picker, st.selections.get(p.kind) ?? p.current);
});

/** Open the screen; null when it was left with Ctrl-C. */
export async function runPluginsScreen(model: ScreenModel): Promise<ScreenChoices | null> {
  try {
    return await screenPrompt({ model }, { clearPromptOnDone: true });
  } catch (e) {
    if (e instanceof Error && e.name === "ExitPromptError") return null;
    throw e;
  }
}

function summary(c: ScreenChanges): string[] {
  return [
    ...c.enable.map((k) => `  enable  ${k}`),
    ...c.disable.map((k) => `  disable ${k}`),
    ...c.select.map((s) => `  ${s.select}: ${s.value ?? "(built-in)"}`),
  ];
}

/**
 * `hermes plugins` on a terminal: the screen, then the changes and one question; nothing is written before "y".
 * Then the edits keep the config's comments, consent is asked for newly enabled plugins, and the home compiles once.
 */
export async function openPluginsScreen(paths: HomePaths): Promise<void> {
  const { applyScreenChanges, loadScreenModel, screenChanges } = await import("../app/plugins-screen.js");
  const model = await loadScreenModel({ paths, warn: err });
  const choices = await runPluginsScreen(model);
  if (!choices) return out("Cancelled; nothing changed.");
  const changes = screenChanges(model, choices);
  const lines = summary(changes);
  if (!lines.length) return out("No changes.");
  out("Changes:");
  for (const l of lines) out(l);
  const io = terminalIo();
  if (!(await io.confirm("Apply these changes? [y/N] "))) return out("Not applied; nothing changed.");
  const r = await applyScreenChanges({ paths, changes, io, report: (line) => out(line) });
  if (r.compiled?.applied) out(style.dim(`lock updated: generation ${r.compiled.generation}`));
}
