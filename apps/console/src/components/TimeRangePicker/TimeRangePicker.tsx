import { useEffect, useId, useState } from 'react';
import {
  RANGE_PRESETS,
  type TimeRange,
  parseLocalDateTime,
  toIso,
  toLocalDateTimeValue,
} from '../../lib/time-range.ts';
import type { UrlPatch } from '../../lib/url-state.ts';

/** Preset ranges ("last 15 minutes" of event time) or an absolute from/to; writes to the URL. */
export function TimeRangePicker({
  range,
  onChange,
}: {
  range: TimeRange;
  onChange: (patch: UrlPatch) => void;
}) {
  const id = useId();
  const [custom, setCustom] = useState(range.key === 'custom');
  const [fromValue, setFromValue] = useState(toLocalDateTimeValue(range.fromMs));
  const [toValue, setToValue] = useState(toLocalDateTimeValue(range.toMs));
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    if (range.key === 'custom') setCustom(true);
  }, [range.key]);

  const selectValue = custom ? 'custom' : range.key;

  function applyCustom() {
    const from = parseLocalDateTime(fromValue);
    const to = parseLocalDateTime(toValue);
    if (from === null || to === null || to <= from) {
      setProblem('“To” must be after “From”.');
      return;
    }
    setProblem(null);
    onChange({ range: null, from: toIso(from), to: toIso(to) });
  }

  return (
    <div className="range-picker">
      <label htmlFor={`${id}-preset`} className="visually-hidden">
        Time range
      </label>
      <select
        id={`${id}-preset`}
        className="select"
        value={selectValue}
        onChange={(event) => {
          const value = event.target.value;
          if (value === 'custom') {
            setFromValue(toLocalDateTimeValue(range.fromMs));
            setToValue(toLocalDateTimeValue(range.toMs));
            setCustom(true);
            return;
          }
          setCustom(false);
          onChange({ range: value, from: null, to: null });
        }}
      >
        {RANGE_PRESETS.map((preset) => (
          <option key={preset.key} value={preset.key}>
            {preset.label}
          </option>
        ))}
        <option value="custom">Custom range…</option>
      </select>
      {custom ? (
        <form
          className="range-picker__custom"
          onSubmit={(event) => {
            event.preventDefault();
            applyCustom();
          }}
        >
          <label>
            <span>From</span>
            <input
              type="datetime-local"
              step="1"
              className="input"
              value={fromValue}
              onChange={(e) => setFromValue(e.target.value)}
            />
          </label>
          <label>
            <span>To</span>
            <input
              type="datetime-local"
              step="1"
              className="input"
              value={toValue}
              onChange={(e) => setToValue(e.target.value)}
            />
          </label>
          <button type="submit" className="button button--small">
            Apply
          </button>
          {problem ? (
            <span className="range-picker__problem" role="alert">
              {problem}
            </span>
          ) : null}
        </form>
      ) : null}
    </div>
  );
}
