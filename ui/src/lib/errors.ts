// Turning a kernel error into what the UI shows: errors on fields, or one banner.
import type { Error as KernelError } from "../bindings/Error";

export type Shown = { fields: { [field: string]: string }; banner: string | null };

/** Field errors go on their field (a rule's errorField, a coercion's field); the rest is a banner. */
export function showError(e: KernelError, fieldsOnPage: readonly string[]): Shown {
  const fields: { [f: string]: string } = {};
  if (e.code === "record.validation_rule" && e.details?.length) {
    for (const d of e.details) {
      if (fieldsOnPage.includes(d.path) && !fields[d.path]) fields[d.path] = d.message;
    }
  } else if (e.field && fieldsOnPage.includes(e.field)) {
    fields[e.field] = e.message;
  }
  const banner = Object.keys(fields).length > 0 ? null : bannerText(e);
  return { fields, banner };
}

export function bannerText(e: KernelError): string {
  switch (e.code) {
    case "conflict":
      return `${e.message}`;
    case "metadata.stale":
      return "The workspace definition changed in another window. Reopen the workspace.";
    case "store.io":
      return e.retriable ? `${e.message} (you can retry)` : e.message;
    default:
      return e.message;
  }
}

/** The line under a failed model call: the code, who can fix it (`about` what, for the user's own faults), and whether a retry may help. */
export function faultLine(e: KernelError, about: string): string {
  const who = e.fault === "user" ? `about ${about} or your access` : e.fault === "admin" ? "an administrator can fix this" : "a problem of the program or the model";
  return `${e.code} · ${who}${e.retriable ? " · you can retry" : ""}`;
}
