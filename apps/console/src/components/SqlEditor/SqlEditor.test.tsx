// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqlEditor } from './SqlEditor.tsx';

afterEach(cleanup);

function Harness({ onRun, errorLine = null }: { onRun: () => void; errorLine?: number | null }) {
  const [sql, setSql] = useState('SELECT 1');
  return <SqlEditor value={sql} onChange={setSql} onRun={onRun} errorLine={errorLine} />;
}

describe('SqlEditor', () => {
  it('highlights keywords under an editable, labelled textarea', () => {
    const { container } = render(<Harness onRun={() => {}} />);
    const input = screen.getByLabelText('SQL query') as HTMLTextAreaElement;
    fireEvent.change(input, { target: { value: "SELECT pool FROM spans WHERE outcome = 'error'" } });
    expect(input.value).toContain('FROM spans');
    const keywords = [...container.querySelectorAll('.tok-keyword')].map((e) => e.textContent);
    expect(keywords).toEqual(['SELECT', 'FROM', 'WHERE']);
    expect(container.querySelector('.tok-string')?.textContent).toBe("'error'");
  });

  it('runs on Ctrl+Enter and Cmd+Enter but not on a plain Enter', () => {
    const onRun = vi.fn();
    render(<Harness onRun={onRun} />);
    const input = screen.getByLabelText('SQL query');
    fireEvent.keyDown(input, { key: 'Enter' });
    fireEvent.keyDown(input, { key: 'Enter', ctrlKey: true });
    fireEvent.keyDown(input, { key: 'Enter', metaKey: true });
    expect(onRun).toHaveBeenCalledTimes(2);
  });

  it('marks the line an error names', () => {
    const { container } = render(<Harness onRun={() => {}} errorLine={1} />);
    expect(container.querySelector('.sql-editor__gutter .is-error')?.textContent).toBe('1');
    expect(screen.getByLabelText('SQL query').getAttribute('aria-invalid')).toBe('true');
  });
});
