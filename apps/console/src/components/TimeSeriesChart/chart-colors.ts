// Distinct, colour-blind-friendly hues (Okabe–Ito plus a few), in a stable order per series label.
export const SERIES_COLORS = [
  '#2563eb',
  '#e69f00',
  '#009e73',
  '#cc79a7',
  '#d55e00',
  '#56b4e9',
  '#7c3aed',
  '#a16207',
  '#0f766e',
  '#be123c',
];

export function pickColor(index: number): string {
  return SERIES_COLORS[index % SERIES_COLORS.length]!;
}
