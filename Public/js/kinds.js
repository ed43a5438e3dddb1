// The activity kinds the server accepts (`GET /kinds`): names, labels, enum values with their labels and
// icons, countdown field, presentations (docs/TEMPLATES.md). The dashboard reads them once at start; the
// workout picker and the kind switch are built from them, not from a list of their own.

/**
 * Fetches the server's kinds.
 * @param {(url: string, init?: object) => Promise<Response>} [fetchImpl=fetch]
 * @returns {Promise<object[]>} the `kinds` array; empty when the server does not answer with one.
 */
export async function fetchKinds(fetchImpl = fetch) {
  try {
    const response = await fetchImpl("/kinds", { cache: "no-store", credentials: "same-origin" });
    if (!response.ok) return [];
    const body = await response.json();
    return Array.isArray(body?.kinds) ? body.kinds : [];
  } catch (_) {
    return []; // offline or an older server: the page keeps its built-in markup
  }
}

/**
 * The workout picker's entries from the workout kind: `[{value, label}]` in `kind.json` order.
 * @param {object[]} kinds
 * @returns {{value: string, label: string}[]}
 */
export function workoutChoices(kinds) {
  const workout = kinds.find((k) => k?.name === "workout");
  return (workout?.enums?.workout ?? []).filter((e) => typeof e?.value === "string")
    .map((e) => ({ value: e.value, label: typeof e.label === "string" ? e.label : e.value }));
}
