import { describe, expect, it } from "vitest";
import {
  addField,
  addObject,
  freeKey,
  keyOf,
  moveField,
  newField,
  parseNames,
  setMasterDetail,
  setObjectLabel,
  setRight,
  usersWith,
} from "./definition";
import type { ObjectDef } from "../bindings/ObjectDef";
import type { WorkspaceDefinition } from "../bindings/WorkspaceDefinition";

function blank(): WorkspaceDefinition {
  return {
    format: "countersign.workspace/v1",
    name: "W",
    currency: "USD",
    objects: [],
    permissionSets: [{ key: "admin", label: "Admin", system: ["metadata.deploy"], objects: {}, fields: {}, viewAll: true }],
    users: [{ key: "me", name: "Me", active: true, permissionSets: ["admin"] }],
  };
}

describe("definition editing", () => {
  it("makes keys from labels, never a taken one", () => {
    expect(keyOf("Unit Price (€)")).toBe("unit_price");
    expect(keyOf("2nd phone")).toBe("f_2nd_phone");
    expect(keyOf("Café Owner")).toBe("cafe_owner");
    expect(freeKey("name", ["name", "name_2"])).toBe("name_3");
  });
  it("adds an object with a name field the deployer's sets may use", () => {
    const def = blank();
    const o = addObject(def, "Property", "Properties", ["admin"]);
    expect(o.key).toBe("property");
    expect(o.fields.map((f) => f.key)).toEqual(["name"]);
    expect(o.layout?.sections[0].fields).toEqual(["name"]);
    expect(def.permissionSets[0].objects.property).toEqual(["read", "create", "edit", "delete"]);
  });
  it("gives each type what it needs and keeps the layout in the field order", () => {
    const def = blank();
    const o = addObject(def, "Lease", "Leases", []);
    o.layout = { sections: [{ label: "Lease", fields: ["name"] }] };
    addField(o, newField("Rent", "currency", ["name"]));
    addField(o, newField("Starts", "date", ["name", "rent"]));
    expect(o.fields[1]).toMatchObject({ key: "rent", type: "currency", precision: 14, scale: 2 });
    expect(o.layout.sections[0].fields).toEqual(["name", "rent", "starts"]);
    moveField(o, 2, 0);
    expect(o.fields.map((f) => f.key)).toEqual(["starts", "name", "rent"]);
    expect(o.layout.sections[0].fields).toEqual(["starts", "name", "rent"]);
  });
  it("makes a master-detail object inherit sharing and its field required", () => {
    const def = blank();
    const o = addObject(def, "Unit", "Units", []);
    const f = newField("Property", "lookup", ["name"], "property");
    addField(o, f);
    setMasterDetail(o, f, true);
    expect([o.sharing, f.required]).toEqual(["inherit", true]);
    setMasterDetail(o, f, false);
    expect(o.sharing).toBe("public_read_write");
  });
  it("keeps read with every right, and drops the object without read", () => {
    const set = blank().permissionSets[0];
    setRight(set, "unit", "edit", true);
    expect(set.objects.unit).toEqual(["read", "edit"]);
    setRight(set, "unit", "read", false);
    expect(set.objects.unit).toBeUndefined();
  });
  it("finds who may deploy", () => {
    const def = blank();
    expect(usersWith(def, "metadata.deploy")).toEqual(["me"]);
    def.users[0].active = false;
    expect(usersWith(def, "metadata.deploy")).toEqual([]);
  });
});

describe("an object's other names", () => {
  it("reads synonyms as typed, without blanks or repeats", () => {
    expect(parseNames(" deals, Deals ,, Geschäfte ")).toEqual(["deals", "Geschäfte"]);
  });
  it("keeps a language's label and plural together and drops an emptied language", () => {
    const o = { labels: undefined } as unknown as ObjectDef;
    setObjectLabel(o, "de", "label", "Rechnung");
    setObjectLabel(o, "de", "pluralLabel", "Rechnungen");
    expect(o.labels).toEqual({ de: { label: "Rechnung", pluralLabel: "Rechnungen" } });
    setObjectLabel(o, "de", "label", "");
    setObjectLabel(o, "de", "pluralLabel", " ");
    expect(o.labels).toBeUndefined();
  });
});
