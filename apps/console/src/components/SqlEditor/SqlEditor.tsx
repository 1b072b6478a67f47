import { forwardRef, useId, useImperativeHandle, useRef } from 'react';
import { tokenizeSql } from '../../lib/highlight-sql.ts';

export interface SqlEditorHandle {
  insertAtCursor(text: string): void;
  focus(): void;
}

export interface SqlEditorProps {
  value: string;
  onChange: (value: string) => void;
  onRun?: () => void;
  /** 1-based line to mark (from an error message). */
  errorLine?: number | null;
  label?: string;
  describedBy?: string;
}

/**
 * A textarea over a highlighted copy of its text: native editing, undo, selection and screen
 * reader support, with SQL colours underneath. Ctrl/⌘+Enter runs; Tab moves focus as usual.
 */
export const SqlEditor = forwardRef<SqlEditorHandle, SqlEditorProps>(function SqlEditor(
  { value, onChange, onRun, errorLine = null, label = 'SQL query', describedBy },
  ref,
) {
  const id = useId();
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const preRef = useRef<HTMLPreElement>(null);

  useImperativeHandle(ref, () => ({
    insertAtCursor(text: string) {
      const el = textareaRef.current;
      if (!el) return;
      const start = el.selectionStart ?? value.length;
      const end = el.selectionEnd ?? value.length;
      const next = value.slice(0, start) + text + value.slice(end);
      onChange(next);
      requestAnimationFrame(() => {
        el.focus();
        el.setSelectionRange(start + text.length, start + text.length);
      });
    },
    focus() {
      textareaRef.current?.focus();
    },
  }));

  const lines = value.split('\n');
  return (
    <div className="sql-editor">
      <label htmlFor={id} className="visually-hidden">
        {label}
      </label>
      <div className="sql-editor__gutter" aria-hidden="true">
        {lines.map((_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: line numbers are positional
          <div key={i} className={errorLine === i + 1 ? 'is-error' : undefined}>
            {i + 1}
          </div>
        ))}
      </div>
      <div className="sql-editor__surface">
        <pre ref={preRef} className="sql-editor__highlight" aria-hidden="true">
          {tokenizeSql(value).map((token, i) =>
            token.type === 'space' || token.type === 'text' ? (
              token.text
            ) : (
              // biome-ignore lint/suspicious/noArrayIndexKey: tokens are positional
              <span key={i} className={`tok-${token.type}`}>
                {token.text}
              </span>
            ),
          )}
          {'\n'}
        </pre>
        <textarea
          id={id}
          ref={textareaRef}
          className="sql-editor__input"
          value={value}
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          autoCorrect="off"
          aria-describedby={describedBy}
          aria-invalid={errorLine !== null ? true : undefined}
          data-testid="sql-input"
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => {
            if (preRef.current) {
              preRef.current.scrollTop = e.currentTarget.scrollTop;
              preRef.current.scrollLeft = e.currentTarget.scrollLeft;
            }
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              onRun?.();
            }
          }}
          rows={Math.min(Math.max(lines.length + 1, 6), 24)}
        />
      </div>
    </div>
  );
});
