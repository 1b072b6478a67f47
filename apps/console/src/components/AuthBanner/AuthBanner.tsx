import { type FormEvent, useEffect, useId, useState } from 'react';
import { AUTH_REQUIRED_EVENT, readApiToken, writeApiToken } from '../../lib/api-client.ts';

/**
 * Asks for an API token when Governor answers 401 (auth.tokens in its config). The token stays
 * in this browser's localStorage and goes out as `Authorization: Bearer`.
 */
export function AuthBanner() {
  const id = useId();
  const [message, setMessage] = useState<string | null>(null);
  const [token, setToken] = useState('');
  const hasToken = readApiToken() !== null;

  useEffect(() => {
    const onRequired = (event: Event) => setMessage((event as CustomEvent<string>).detail);
    window.addEventListener(AUTH_REQUIRED_EVENT, onRequired);
    return () => window.removeEventListener(AUTH_REQUIRED_EVENT, onRequired);
  }, []);

  if (message === null) return null;

  function save(event: FormEvent) {
    event.preventDefault();
    if (token.trim() === '') return;
    writeApiToken(token.trim());
    window.location.reload();
  }

  return (
    <form className="auth-banner" onSubmit={save} role="alert" data-testid="auth-banner">
      <div>
        <strong>{hasToken ? 'The saved API token was refused' : 'This Governor needs an API token'}</strong>
        <div className="auth-banner__detail">{message}</div>
      </div>
      <label htmlFor={id} className="visually-hidden">
        API token
      </label>
      <input
        id={id}
        className="input"
        type="password"
        autoComplete="off"
        placeholder="API token"
        value={token}
        onChange={(e) => setToken(e.target.value)}
      />
      <button type="submit" className="button button--primary button--small">
        Use token
      </button>
      {hasToken ? (
        <button
          type="button"
          className="button button--ghost button--small"
          onClick={() => {
            writeApiToken(null);
            window.location.reload();
          }}
        >
          Forget saved token
        </button>
      ) : null}
    </form>
  );
}
