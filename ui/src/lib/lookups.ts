// Names for lookup values: a record page shows "Acme Industries", not "acc_0007".
import { api } from "./api";
import type { ObjectView } from "../bindings/ObjectView";
import type { JsonValue } from "../bindings/serde_json/JsonValue";

const nameFields = new Map<string, Promise<string | null>>();

/** The name field of `object` for the current user, or null if they cannot read it. */
function nameFieldOf(object: string): Promise<string | null> {
  let p = nameFields.get(object);
  if (!p) {
    p = api.describeObject(object).then(
      (v) => v.nameField,
      () => null,
    );
    nameFields.set(object, p);
  }
  return p;
}

/** Forget cached metadata (another user, another workspace). */
export function forgetNames(): void {
  nameFields.clear();
}

/** Lookup field key → the target record's name, for the lookups the user can resolve. */
export async function lookupNames(view: ObjectView, values: { [k in string]?: JsonValue }): Promise<{ [k: string]: string }> {
  const out: { [k: string]: string } = {};
  await Promise.all(
    view.fields
      .filter((f) => f.type === "lookup" && f.target && typeof values[f.key] === "string")
      .map(async (f) => {
        const nameField = await nameFieldOf(f.target!);
        if (!nameField) return;
        try {
          const r = await api.query({
            object: f.target!,
            fields: [nameField],
            filters: { field: "id", op: "eq", value: values[f.key] as string },
            limit: 1,
          });
          const name = r.records[0]?.[nameField];
          if (typeof name === "string") out[f.key] = name;
        } catch {
          // The parent is not readable: the id is shown as it is.
        }
      }),
  );
  return out;
}
