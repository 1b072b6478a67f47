// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api-client.ts';
import type { ApiState } from '../../lib/use-api.ts';
import { AsyncContent } from './StateView.tsx';

afterEach(cleanup);

function state<T>(partial: Partial<ApiState<T>>): ApiState<T> {
  return { data: null, error: null, loading: false, reload: () => {}, ...partial };
}

describe('AsyncContent', () => {
  it('shows loading, then content', () => {
    const { rerender } = render(
      <AsyncContent state={state<string>({ loading: true })}>{(d) => <p>{d}</p>}</AsyncContent>,
    );
    expect(screen.getByRole('status').textContent).toContain('Loading');
    rerender(<AsyncContent state={state({ data: 'hello' })}>{(d) => <p>{d}</p>}</AsyncContent>);
    expect(screen.getByText('hello')).toBeTruthy();
  });

  it('shows the empty state when the data is empty', () => {
    render(
      <AsyncContent state={state({ data: [] as number[] })} isEmpty={(d) => d.length === 0}>
        {() => <p>rows</p>}
      </AsyncContent>,
    );
    expect(screen.getByText('No data in this time range')).toBeTruthy();
  });

  it('explains a route the server does not have and retries on request', () => {
    const reload = vi.fn();
    render(
      <AsyncContent
        state={state({
          error: new ApiError(404, 'GOV_ERR_NOT_FOUND', 'no route for GET /api/traces', '/api/traces?x=1'),
          reload,
        })}
      >
        {() => null}
      </AsyncContent>,
    );
    expect(screen.getByRole('alert').textContent).toContain('Not available on this server yet');
    expect(screen.getByRole('alert').textContent).toContain('/api/traces');
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(reload).toHaveBeenCalled();
  });

  it('keeps earlier data when a refresh fails', () => {
    render(
      <AsyncContent state={state({ data: 'old', error: new Error('timeout') })}>
        {(d) => <p>{d}</p>}
      </AsyncContent>,
    );
    expect(screen.getByText('old')).toBeTruthy();
    expect(screen.getByRole('status').textContent).toContain('timeout');
  });
});
