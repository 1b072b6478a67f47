// Settings Governor writes into index.html (`<script type="application/json" id="governor-bootstrap">`)
// so the console knows them before its first API call. The Vite dev server has none: absent is fine.

export interface Bootstrap {
  slo: { ttftMs: number | null; e2eMs: number | null };
}

let cached: Bootstrap | null | undefined;

export function readBootstrap(): Bootstrap | null {
  if (cached !== undefined) return cached;
  cached = null;
  const element = typeof document === 'undefined' ? null : document.getElementById('governor-bootstrap');
  if (element?.textContent) {
    try {
      cached = JSON.parse(element.textContent) as Bootstrap;
    } catch {
      cached = null;
    }
  }
  return cached;
}
