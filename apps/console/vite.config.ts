import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dev server proxies Governor's API to a running `pnpm governor start` (default port 4318);
// set GOVERNOR_URL to point elsewhere. The production build is served by Governor itself at `/`.
const target = process.env.GOVERNOR_URL ?? 'http://127.0.0.1:4318';

export default defineConfig({
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      '/api': { target, changeOrigin: true },
      '/v1': { target, changeOrigin: true },
      '/metrics': { target, changeOrigin: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1200,
  },
});
