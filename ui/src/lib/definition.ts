// Editing a workspace definition in the app: the pure steps the Objects and the Users &
// permissions editors take on a draft (a copy of the deployed definition). Nothing here
// checks the result: the kernel's preview does, against the definition's rules and the data.
import type { FieldDef } from "../bindings/FieldDef";
import type { FieldType } from "../bindings/FieldType";
import type { ObjectDef } from "../bindings/ObjectDef";
import type { ObjectRight } from "../bindings/ObjectRight";
import type { PermissionSetDef } from "../bindings/PermissionSetDef";
import type { WorkspaceDefinition } from "../bindings/WorkspaceDefinition";

/** Every field type the kernel has, with the words the editor shows. */
export const FIELD_TYPES: [FieldType, string][] = [
  ["text", "Text"],
  ["long_text", "Long text"],
  ["number", "Number"],
  ["currency", "Currency"],
  ["date", "Date"],
  ["datetime", "Date and time"],
  ["boolean", "Yes / no"],
  ["picklist", "Picklist"],
  ["lookup", "Lookup"],
  ["email", "E-mail"],
  ["phone", "Phone"],
  ["url", "Web address"],
];

export const RIGHTS: ObjectRight[] = ["read", "create", "edit", "delete"];

/** The system permissions a permission set may grant. */
export const SYSTEM_PERMISSIONS: [string, string][] = [
  ["ai.use", "Use the AI"],
  ["ai.author", "Author prompts and suites"],
  ["ai.approve", "Approve proposals"],
  ["ai.manage", "Manage models and capabilities"],
  ["metadata.deploy", "Change objects, fields, users and permissions"],
];

/** A key from a label: lower case, words joined by `_`, starting with a letter. */
export function keyOf(label: string): string {
  const k = label
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 63);
  return /^[a-z]/.test(k) ? k : `f_${k}`.slice(0, 63);
}

/** `key`, or `key_2`, `key_3`… if taken (a retired key stays taken). */
export function freeKey(key: string, taken: string[]): string {
  if (!taken.includes(key)) return key;
  for (let i = 2; ; i++) if (!taken.includes(`${key}_${i}`)) return `${key}_${i}`;
}

export function copy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** A new field of `type`, with what that type needs to be valid. */
export function newField(label: string, type: FieldType, taken: string[], target?: string): FieldDef {
  const f: FieldDef = { key: freeKey(keyOf(label), taken), label, type };
  if (type === "number") Object.assign(f, { precision: 12, scale: 0 });
  if (type === "currency") Object.assign(f, { precision: 14, scale: 2 });
  if (type === "text") f.maxLength = 255;
  if (type === "picklist") f.values = [];
  if (type === "lookup") f.target = target;
  return f;
}

/** A new object with its name field, and every right on it for the sets of `deployer` sets. */
export function addObject(def: WorkspaceDefinition, label: string, plural: string, deployerSets: string[]): ObjectDef {
  const o: ObjectDef = {
    key: freeKey(keyOf(label), def.objects.map((x) => x.key)),
    label,
    pluralLabel: plural || `${label}s`,
    sharing: "public_read_write",
    nameField: "name",
    fields: [{ key: "name", label: `${label} Name`, type: "text", required: true, maxLength: 255 }],
    validationRules: [],
    // One section: the record page and the list show the fields in the order they are put in.
    layout: { sections: [{ label, fields: ["name"] }] },
  };
  def.objects.push(o);
  for (const s of def.permissionSets) if (deployerSets.includes(s.key)) s.objects[o.key] = [...RIGHTS];
  return o;
}

/** Move a field within its object (the page layout follows the field order). */
export function moveField(o: ObjectDef, from: number, to: number) {
  if (from === to || from < 0 || to < 0 || from >= o.fields.length || to >= o.fields.length) return;
  const [f] = o.fields.splice(from, 1);
  o.fields.splice(to, 0, f);
  if (o.layout) {
    // One section in field order: the order the person chose is the page's order.
    const placed = new Set(o.layout.sections.flatMap((s) => s.fields));
    const order = o.fields.map((x) => x.key).filter((k) => placed.has(k));
    let i = 0;
    for (const s of o.layout.sections) s.fields = order.slice(i, (i += s.fields.length));
  }
}

/** Add a field to an object (and to the end of its layout's last section, if it has one). */
export function addField(o: ObjectDef, f: FieldDef) {
  o.fields.push(f);
  const last = o.layout?.sections.at(-1);
  if (last) last.fields.push(f.key);
}

/** A master-detail lookup makes its object inherit its sharing from the master. */
export function setMasterDetail(o: ObjectDef, f: FieldDef, on: boolean) {
  f.masterDetail = on || undefined;
  if (on) {
    f.required = true;
    o.sharing = "inherit";
  } else if (o.sharing === "inherit" && !o.fields.some((x) => x.masterDetail)) {
    o.sharing = "public_read_write";
  }
}

/** Turn one right on or off; read goes with any other right, and without read none holds. */
export function setRight(set: PermissionSetDef, object: string, right: ObjectRight, on: boolean) {
  const have = new Set(set.objects[object] ?? []);
  if (on) {
    have.add(right);
    have.add("read");
  } else if (right === "read") {
    have.clear();
  } else {
    have.delete(right);
  }
  if (have.size === 0) delete set.objects[object];
  else set.objects[object] = RIGHTS.filter((r) => have.has(r));
}

/** Users in `def` (active) whose sets grant `permission`. */
export function usersWith(def: WorkspaceDefinition, permission: string): string[] {
  const sets = new Set(def.permissionSets.filter((s) => s.system.includes(permission)).map((s) => s.key));
  return def.users.filter((u) => u.active !== false && u.permissionSets.some((p) => sets.has(p))).map((u) => u.key);
}

/** The languages an object may be labelled in besides its own labels. */
export const OTHER_LANGUAGES = ["de", "fr", "es"] as const;

/** An object's other names, as typed: comma-separated, blanks and repeats left out. */
export function parseNames(text: string): string[] {
  const out: string[] = [];
  for (const n of text.split(",").map((x) => x.trim())) {
    if (n && !out.some((x) => x.toLowerCase() === n.toLowerCase())) out.push(n);
  }
  return out;
}

/** Set an object's label or plural in one language; both blank removes the language. */
export function setObjectLabel(o: ObjectDef, language: string, part: "label" | "pluralLabel", value: string) {
  const labels = { ...(o.labels ?? {}) };
  const now = { label: labels[language]?.label ?? "", pluralLabel: labels[language]?.pluralLabel ?? "", [part]: value.trim() };
  if (!now.label && !now.pluralLabel) delete labels[language];
  else labels[language] = now;
  o.labels = Object.keys(labels).length ? labels : undefined;
}
