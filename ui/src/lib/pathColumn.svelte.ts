// The width of the chunk table's path column, as the user dragged it, kept
// for the session: across re-renders, the table/map switch and a reload of
// the page (sessionStorage), not across restarts. `null`: the default share.

/** The narrowest and widest the user can make the column, in CSS pixels. */
export const PATH_COLUMN_MIN = 160;
export const PATH_COLUMN_MAX = 1200;

const KEY = 'loupe.pathColumnWidth';

function load(): number | null {
  try {
    const v = Number(sessionStorage.getItem(KEY) ?? '');
    return Number.isFinite(v) && v > 0 ? v : null;
  } catch {
    return null;
  }
}

let width = $state<number | null>(load());

export const pathColumn = {
  /** The chosen width in pixels, or `null` for the default share. */
  get width(): number | null {
    return width;
  },
  set width(w: number | null) {
    width = w === null ? null : Math.round(Math.min(PATH_COLUMN_MAX, Math.max(PATH_COLUMN_MIN, w)));
    try {
      if (width === null) sessionStorage.removeItem(KEY);
      else sessionStorage.setItem(KEY, String(width));
    } catch {
      // storage unavailable: remembered until the page reloads
    }
  },
};
