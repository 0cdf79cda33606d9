// Settings' sections: each its own page and route (`settings/<key>`), and the settings each
// holds by name, which the search box finds. One list: the sidebar, the search and deep links
// ("Set up a model" → settings/model) all read it.

export type SettingsSection = {
  key: string;
  label: string;
  /** The settings on the page, by the names a person would look for. */
  settings: string[];
  /** Only for someone who may change the workspace's definition. */
  definition?: boolean;
};

export const SECTIONS: SettingsSection[] = [
  { key: "general", label: "General", settings: ["Theme", "Dark mode", "Light mode", "Language", "Locale", "Date format", "Number format", "Your own language"] },
  {
    key: "model",
    label: "Model & runtime",
    settings: ["Providers", "Discover a local model", "Built-in model", "Threads", "Context size", "Pinned models", "API key", "Logs"],
  },
  {
    key: "objects",
    label: "Objects & vocabulary",
    settings: ["Objects", "Fields", "Picklist values", "Validation rules", "Indexes", "Business vocabulary", "Terms", "Synonyms"],
  },
  { key: "people", label: "Users & permissions", settings: ["Users", "Permission sets", "Field access", "Row sharing"], definition: true },
  {
    key: "studio",
    label: "AI studio",
    settings: ["Prompt versions", "Eval suites", "Runs", "Bindings", "Budgets", "Auto-apply", "Judged assertions", "Learned from corrections"],
  },
  { key: "mcp", label: "Other apps (MCP)", settings: ["MCP server", "Use your records from other AI apps", "Tools switched off"] },
  { key: "tools", label: "Tools", settings: ["Tools", "HTTP tools", "MCP servers", "Tool approvals"] },
];

export const DEFAULT_SECTION = "general";

/** The section a route names, or the default one. */
export function sectionOf(key: string | undefined): SettingsSection {
  return SECTIONS.find((s) => s.key === key) ?? SECTIONS.find((s) => s.key === DEFAULT_SECTION)!;
}

/** Settings whose name or section holds every word of the query (case-insensitive). */
export function findSettings(query: string, sections: SettingsSection[] = SECTIONS): { section: SettingsSection; setting: string }[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  const out: { section: SettingsSection; setting: string }[] = [];
  for (const section of sections) {
    for (const setting of section.settings) {
      const text = `${setting} ${section.label}`.toLowerCase();
      if (words.every((w) => text.includes(w))) out.push({ section, setting });
    }
  }
  return out;
}

/** A section's route as the window's URL shows it (`#settings/model`). */
export function sectionHash(key: string): string {
  return `#settings/${sectionOf(key).key}`;
}

/** The section a URL's hash names (`#settings/model`), if it names one. */
export function sectionFromHash(hash: string): string | null {
  const m = /^#settings\/([a-z]+)$/.exec(hash);
  return m && SECTIONS.some((s) => s.key === m[1]) ? m[1] : null;
}
