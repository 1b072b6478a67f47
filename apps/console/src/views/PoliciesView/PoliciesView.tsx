import { RECOMMENDATION_KINDS, type RecommendationKind } from '@governor/conventions';
import { useEffect, useState } from 'react';
import { describeAction, describeTarget, fetchActions } from '../../api/control.ts';
import {
  type PoliciesResponse,
  type Policy,
  type PolicyPreviewEntry,
  fetchPolicies,
  previewPolicies,
  savePolicies,
} from '../../api/policies.ts';
import { Panel } from '../../components/Panel/index.ts';
import { AsyncContent, EmptyState, ErrorState, LoadingState } from '../../components/StateView/index.ts';
import { ApiError } from '../../lib/api-client.ts';
import { MISSING, formatDateTime, formatPercent } from '../../lib/format.ts';
import { useApi } from '../../lib/use-api.ts';

// Auto-apply policies: list, create, edit, delete. Every change sends the whole list through
// PUT /api/policies (audited as policies_updated, stored in DuckDB); while a policy is edited,
// POST /api/policies/preview shows what the edited list would do with the open recommendations,
// and its validation errors show next to the field they name.

/** The editor's fields as typed: numbers stay text so the server's validation names bad input. */
interface Draft {
  name: string;
  kinds: RecommendationKind[];
  target: string;
  autoApply: boolean;
  maxStep: string;
  cooldownS: string;
  maxActionsPerHour: string;
  minConfidence: string;
  dryRun: boolean;
}

/** A field of the editor an API error can point at (the path after `policies.<i>.`). */
type FieldKey = 'name' | 'kind' | 'target' | 'maxStep' | 'cooldownS' | 'maxActionsPerHour' | 'minConfidence';

interface Editing {
  /** Index in the list, or null for a new policy (appended: the first matching policy decides). */
  index: number | null;
  draft: Draft;
}

interface Problem {
  field: FieldKey | null;
  message: string;
  code: string;
}

const EMPTY_DRAFT: Draft = {
  name: '',
  kinds: [],
  target: '',
  autoApply: true,
  maxStep: '',
  cooldownS: '',
  maxActionsPerHour: '',
  minConfidence: '0',
  dryRun: false,
};

export function PoliciesView() {
  const policies = useApi('policies', (signal) => fetchPolicies(signal), { live: false });
  const changes = useApi('policy-changes', (signal) => fetchActions(signal));
  const [editing, setEditing] = useState<Editing | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function remove(list: Policy[], index: number) {
    const name = list[index]!.name;
    try {
      await savePolicies(list.filter((_, i) => i !== index));
      setNotice(`Deleted policy ${name}.`);
    } catch (error) {
      setNotice(`Could not delete ${name}: ${(error as Error).message}`);
    }
    policies.reload();
    changes.reload();
  }

  return (
    <div className="view" data-testid="view-policies">
      {notice ? (
        <p className="notice" role="status" data-testid="policies-notice">
          {notice}
        </p>
      ) : null}
      <AsyncContent state={policies} loadingLabel="Reading policies…">
        {(data) => (
          <>
            <Panel
              title="Policies"
              subtitle={sourceLine(data)}
              testId="policies-list"
              actions={
                editing ? null : (
                  <button
                    type="button"
                    className="button button--primary button--small"
                    onClick={() => {
                      setNotice(null);
                      setEditing({ index: null, draft: { ...EMPTY_DRAFT } });
                    }}
                  >
                    New policy
                  </button>
                )
              }
            >
              {data.policies.length === 0 ? (
                <EmptyState title="No policies: every recommendation waits for a human">
                  A policy lets matching recommendations apply themselves within its limits.
                </EmptyState>
              ) : (
                <PolicyTable
                  policies={data.policies}
                  editingIndex={editing?.index ?? null}
                  onEdit={(index) => {
                    setNotice(null);
                    setEditing({ index, draft: toDraft(data.policies[index]!) });
                  }}
                  onDelete={(index) => remove(data.policies, index)}
                />
              )}
            </Panel>
            {editing ? (
              <PolicyEditor
                key={editing.index ?? 'new'}
                policies={data.policies}
                editing={editing}
                onChange={(draft) => setEditing({ ...editing, draft })}
                onCancel={() => setEditing(null)}
                onSaved={(name) => {
                  setEditing(null);
                  setNotice(`Saved policy ${name}.`);
                  policies.reload();
                  changes.reload();
                }}
              />
            ) : null}
          </>
        )}
      </AsyncContent>
      <Panel title="Policy changes" subtitle="from the audit log, newest first" testId="policy-changes">
        <AsyncContent state={changes} loadingLabel="Reading the audit log…">
          {(entries) => {
            const rows = entries.filter((e) => e.type === 'policies_updated').slice(0, 20);
            if (rows.length === 0) return <EmptyState title="No policy changes through the API yet" />;
            return (
              <div className="table-wrap">
                <table className="table table--compact">
                  <thead>
                    <tr>
                      <th scope="col">When (event time)</th>
                      <th scope="col">Who</th>
                      <th scope="col">What</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((e) => (
                      <tr key={e.id} data-testid="policy-change">
                        <td>{formatDateTime(e.atMs)}</td>
                        <td>{e.actor ?? MISSING}</td>
                        <td>{e.detail ?? MISSING}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            );
          }}
        </AsyncContent>
      </Panel>
    </div>
  );
}

function sourceLine(data: PoliciesResponse): string {
  const order = 'the first policy whose match fits a recommendation decides';
  if (data.source === 'config') return `from the config file · ${order}`;
  return `set through the API by ${data.updatedBy ?? 'unknown'} at ${formatDateTime(data.updatedAt)} · ${order}`;
}

function PolicyTable({
  policies,
  editingIndex,
  onEdit,
  onDelete,
}: {
  policies: Policy[];
  editingIndex: number | null;
  onEdit(index: number): void;
  onDelete(index: number): void;
}) {
  const [confirming, setConfirming] = useState<number | null>(null);
  return (
    <div className="table-wrap">
      <table className="table" data-testid="policies-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Name</th>
            <th scope="col">Kinds</th>
            <th scope="col">Target</th>
            <th scope="col">Mode</th>
            <th scope="col" className="num">
              Max step
            </th>
            <th scope="col" className="num">
              Cooldown
            </th>
            <th scope="col" className="num">
              Per hour
            </th>
            <th scope="col" className="num">
              Min confidence
            </th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {policies.map((p, i) => (
            <tr key={p.name} data-policy={p.name} className={i === editingIndex ? 'is-selected' : undefined}>
              <td className="num">{i + 1}</td>
              <th scope="row">{p.name}</th>
              <td>{p.match.kind?.join(', ') ?? 'all'}</td>
              <td>{p.match.target ? <code>{p.match.target}</code> : 'all'}</td>
              <td data-testid="policy-mode">{modeLabel(p)}</td>
              <td className="num">{p.maxStep ?? MISSING}</td>
              <td className="num">{p.cooldownS === undefined ? 'default' : `${p.cooldownS} s`}</td>
              <td className="num">{p.maxActionsPerHour ?? MISSING}</td>
              <td className="num">{formatPercent(p.minConfidence, 0)}</td>
              <td className="policy-actions">
                <button type="button" className="button button--small" onClick={() => onEdit(i)}>
                  Edit
                </button>
                {confirming === i ? (
                  <button
                    type="button"
                    className="button button--small button--danger"
                    onClick={() => {
                      setConfirming(null);
                      onDelete(i);
                    }}
                  >
                    Confirm delete
                  </button>
                ) : (
                  <button type="button" className="button button--small" onClick={() => setConfirming(i)}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function modeLabel(p: Policy): string {
  if (!p.autoApply) return 'waits for a human';
  return p.dryRun ? 'dry run (records only)' : 'auto-apply';
}

function PolicyEditor({
  policies,
  editing,
  onChange,
  onCancel,
  onSaved,
}: {
  policies: Policy[];
  editing: Editing;
  onChange(draft: Draft): void;
  onCancel(): void;
  onSaved(name: string): void;
}) {
  const { draft } = editing;
  const index = editing.index ?? policies.length;
  const list = withDraft(policies, editing);
  const listKey = JSON.stringify(list);
  const [saving, setSaving] = useState(false);
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null);
  const [preview, setPreview] = useState<{
    entries: PolicyPreviewEntry[] | null;
    problem: Problem | null;
    error: Error | null;
  }>({ entries: null, problem: null, error: null });

  // Preview the edited list a moment after the last keystroke; a newer edit aborts the older call.
  useEffect(() => {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      previewPolicies(JSON.parse(listKey) as unknown[], controller.signal).then(
        (entries) => setPreview({ entries, problem: null, error: null }),
        (error: Error) => {
          if (error.name === 'AbortError') return;
          const problem = problemOf(error, index);
          setPreview((prev) => ({ entries: prev.entries, problem, error: problem ? null : error }));
        },
      );
    }, 250);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [listKey, index]);

  // A save error is about exactly what was sent; once the draft changes, the preview's is current.
  const problem = saveProblem ?? preview.problem;
  const fieldError = (field: FieldKey) =>
    problem?.field === field ? (
      <p className="inline-error" role="alert" data-testid={`field-error-${field}`}>
        {problem.message}
      </p>
    ) : null;

  function update(patch: Partial<Draft>) {
    setSaveProblem(null);
    onChange({ ...draft, ...patch });
  }

  async function save() {
    setSaving(true);
    try {
      await savePolicies(list);
      onSaved(draft.name);
    } catch (error) {
      setSaveProblem(
        problemOf(error as Error, index) ?? {
          field: null,
          message: (error as Error).message,
          code: error instanceof ApiError ? error.code : 'ERROR',
        },
      );
    } finally {
      setSaving(false);
    }
  }

  return (
    <>
      <Panel
        title={editing.index === null ? 'New policy' : `Edit policy ${policies[editing.index]?.name ?? ''}`}
        subtitle={`position ${index + 1} of ${list.length}: earlier policies decide first`}
        testId="policy-editor"
      >
        <form
          className="policy-form"
          onSubmit={(event) => {
            event.preventDefault();
            void save();
          }}
        >
          <label className="field">
            <span className="field__label">Name</span>
            <input
              className="input"
              name="name"
              value={draft.name}
              aria-invalid={problem?.field === 'name'}
              onChange={(e) => update({ name: e.target.value })}
            />
            {fieldError('name')}
          </label>
          <label className="field">
            <span className="field__label">Target pattern (dim=glob, comma-separated; empty: all)</span>
            <input
              className="input"
              name="target"
              placeholder="pool=llama8b-*,region=us-*"
              value={draft.target}
              aria-invalid={problem?.field === 'target'}
              onChange={(e) => update({ target: e.target.value })}
            />
            {fieldError('target')}
          </label>
          <fieldset className="field policy-form__kinds">
            <legend className="field__label">Kinds (none checked: all)</legend>
            {RECOMMENDATION_KINDS.map((kind) => (
              <label key={kind} className="field--inline">
                <input
                  type="checkbox"
                  name={`kind-${kind}`}
                  checked={draft.kinds.includes(kind)}
                  onChange={(e) =>
                    update({
                      kinds: e.target.checked
                        ? RECOMMENDATION_KINDS.filter((k) => k === kind || draft.kinds.includes(k))
                        : draft.kinds.filter((k) => k !== kind),
                    })
                  }
                />
                {kind}
              </label>
            ))}
            {fieldError('kind')}
          </fieldset>
          <div className="policy-form__row">
            <label className="field--inline">
              <input
                type="checkbox"
                name="autoApply"
                checked={draft.autoApply}
                onChange={(e) => update({ autoApply: e.target.checked })}
              />
              Auto-apply
            </label>
            <label className="field--inline">
              <input
                type="checkbox"
                name="dryRun"
                checked={draft.dryRun}
                onChange={(e) => update({ dryRun: e.target.checked })}
              />
              Dry run (record what would be done, send nothing)
            </label>
          </div>
          <div className="policy-form__row">
            {(
              [
                ['minConfidence', 'Min confidence (0–1)', '0'],
                ['maxStep', 'Max step (replicas or points)', 'none'],
                ['cooldownS', 'Cooldown (s)', 'control.cooldown_s'],
                ['maxActionsPerHour', 'Max actions per hour', 'none'],
              ] as const
            ).map(([field, label, placeholder]) => (
              <label key={field} className="field policy-form__number">
                <span className="field__label">{label}</span>
                <input
                  className="input"
                  name={field}
                  inputMode="decimal"
                  placeholder={placeholder}
                  value={draft[field]}
                  aria-invalid={problem?.field === field}
                  onChange={(e) => update({ [field]: e.target.value })}
                />
                {fieldError(field)}
              </label>
            ))}
          </div>
          {problem && problem.field === null ? (
            <p className="inline-error" role="alert" data-testid="form-error">
              {problem.message} <code>{problem.code}</code>
            </p>
          ) : null}
          <div className="policy-form__row">
            <button type="submit" className="button button--primary" disabled={saving}>
              {saving ? 'Saving…' : 'Save policies'}
            </button>
            <button type="button" className="button" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </form>
      </Panel>
      <Panel
        title="Preview"
        subtitle="what the edited policies would do with the open recommendations at the next tick (cooldowns and hourly limits are checked then)"
        testId="policy-preview"
      >
        <PreviewTable preview={preview} editedName={draft.name} />
      </Panel>
    </>
  );
}

function PreviewTable({
  preview,
  editedName,
}: {
  preview: { entries: PolicyPreviewEntry[] | null; problem: Problem | null; error: Error | null };
  editedName: string;
}) {
  if (preview.error) return <ErrorState error={preview.error} />;
  if (preview.entries === null) {
    return preview.problem ? (
      <EmptyState title="Fix the policy to see a preview" />
    ) : (
      <LoadingState label="Gating the open recommendations…" />
    );
  }
  if (preview.entries.length === 0) {
    return <EmptyState title="No open recommendations: nothing would be applied now" />;
  }
  const byEdited = preview.entries.filter((e) => e.policy === editedName);
  const applied = byEdited.filter((e) => e.decision === 'auto_apply').length;
  return (
    <>
      <p className="muted panel__note" data-testid="preview-summary">
        {editedName || 'This policy'} decides {byEdited.length} of {preview.entries.length} open
        recommendation{preview.entries.length === 1 ? '' : 's'} and would auto-apply {applied}.
        {preview.problem ? ' (showing the last valid preview)' : ''}
      </p>
      <div className="table-wrap">
        <table className="table table--compact">
          <thead>
            <tr>
              <th scope="col">Recommendation</th>
              <th scope="col">Target</th>
              <th scope="col" className="num">
                Confidence
              </th>
              <th scope="col">Decided by</th>
              <th scope="col">Outcome</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {preview.entries.map((e) => (
              <tr
                key={e.recommendationId}
                data-recommendation-id={e.recommendationId}
                data-decision={e.decision}
                className={e.policy === editedName ? 'is-selected' : undefined}
              >
                <td>{describeAction(e.kind, e.action)}</td>
                <td>{describeTarget(e.target)}</td>
                <td className="num">{formatPercent(e.confidence, 0)}</td>
                <td>{e.policy ?? 'no policy'}</td>
                <td>
                  <span className={`badge badge--preview-${e.decision}`}>{DECISION_LABELS[e.decision]}</span>
                </td>
                <td className="muted">{e.note}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

const DECISION_LABELS: Record<PolicyPreviewEntry['decision'], string> = {
  auto_apply: 'would auto-apply',
  dry_run: 'dry run only',
  propose: 'waits for a human',
};

function toDraft(p: Policy): Draft {
  const text = (n: number | undefined) => (n === undefined ? '' : String(n));
  return {
    name: p.name,
    kinds: p.match.kind ?? [],
    target: p.match.target ?? '',
    autoApply: p.autoApply,
    maxStep: text(p.maxStep),
    cooldownS: text(p.cooldownS),
    maxActionsPerHour: text(p.maxActionsPerHour),
    minConfidence: text(p.minConfidence),
    dryRun: p.dryRun,
  };
}

/** The draft as the API's policy JSON; text that is not a number is sent as is for the server to name. */
function fromDraft(d: Draft): Record<string, unknown> {
  const number = (text: string): number | string | undefined => {
    const t = text.trim();
    if (t === '') return undefined;
    const n = Number(t);
    return Number.isFinite(n) ? n : t;
  };
  const target = d.target.trim();
  return {
    name: d.name.trim(),
    match: {
      ...(d.kinds.length > 0 ? { kind: d.kinds } : {}),
      ...(target ? { target } : {}),
    },
    autoApply: d.autoApply,
    maxStep: number(d.maxStep),
    cooldownS: number(d.cooldownS),
    maxActionsPerHour: number(d.maxActionsPerHour),
    minConfidence: number(d.minConfidence) ?? 0,
    dryRun: d.dryRun,
  };
}

function withDraft(policies: Policy[], editing: Editing): unknown[] {
  const edited = fromDraft(editing.draft);
  if (editing.index === null) return [...policies, edited];
  return policies.map((p, i) => (i === editing.index ? edited : p));
}

const FIELD_KEYS: readonly FieldKey[] = [
  'name',
  'kind',
  'target',
  'maxStep',
  'cooldownS',
  'maxActionsPerHour',
  'minConfidence',
];

/**
 * Where an API validation error points in the editor. The server names the first bad field as
 * `policies.<i>.<field>[.<sub>]: <message>`, and a repeated name as `policy name "x" is used twice`.
 * Null: not a validation error (the caller shows it as is).
 */
function problemOf(error: Error, index: number): Problem | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  const at = /^policies\.(\d+)\.([A-Za-z]+)(?:\.([A-Za-z]+))?[^:]*: (.*)$/s.exec(error.message);
  if (at) {
    const field = (at[2] === 'match' ? at[3] : at[2]) as FieldKey;
    if (Number(at[1]) === index && FIELD_KEYS.includes(field)) {
      return { field, message: at[4]!, code: error.code };
    }
    return { field: null, message: error.message, code: error.code };
  }
  if (/^policy name ".*" is used twice/.test(error.message)) {
    return { field: 'name', message: error.message, code: error.code };
  }
  return { field: null, message: error.message, code: error.code };
}
