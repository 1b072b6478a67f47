// A small SQL tokenizer for the editor's highlighting. It never fails: anything it does not
// recognise is plain text, and joining the token texts gives back the input exactly.

export type SqlTokenType =
  | 'keyword'
  | 'function'
  | 'string'
  | 'number'
  | 'comment'
  | 'identifier'
  | 'operator'
  | 'space'
  | 'text';

export interface SqlToken {
  type: SqlTokenType;
  text: string;
}

const KEYWORDS = new Set(
  `select from where group by order having limit offset as and or not in is null like ilike between case when then else end
  join left right inner outer full cross on using with recursive union all distinct except intersect asc desc nulls first last
  over partition rows range preceding following current row filter within interval true false cast try_cast exists any some
  explain describe summarize qualify window values lateral natural asof pivot unpivot date timestamp`
    .split(/\s+/)
    .filter(Boolean),
);

const FUNCTIONS = new Set(
  `count sum avg min max quantile quantile_cont quantile_disc median approx_quantile stddev variance any_value arg_max arg_min
  first last list string_agg coalesce nullif greatest least round floor ceil abs epoch_ms epoch_ns to_timestamp make_timestamp
  time_bucket date_trunc date_part strftime now current_timestamp json_extract json_extract_string regexp_matches
  length lower upper substr concat bool_or bool_and histogram percentile_cont percentile_disc row_number rank dense_rank lag lead`
    .split(/\s+/)
    .filter(Boolean),
);

const PATTERNS: [SqlTokenType, RegExp][] = [
  ['space', /^\s+/],
  ['comment', /^--[^\n]*/],
  ['comment', /^\/\*[\s\S]*?(?:\*\/|$)/],
  ['string', /^'(?:[^']|'')*(?:'|$)/],
  ['identifier', /^"(?:[^"]|"")*(?:"|$)/],
  ['number', /^(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+)/i],
  ['text', /^[A-Za-z_][A-Za-z0-9_$]*/],
  ['operator', /^(?:<>|!=|<=|>=|::|\|\||->>|->|[=<>+\-*/%])/],
];

export function tokenizeSql(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  let rest = sql;
  while (rest.length > 0) {
    let matched = false;
    for (const [type, pattern] of PATTERNS) {
      const m = pattern.exec(rest);
      if (!m || m[0].length === 0) continue;
      let tokenType = type;
      if (type === 'text') {
        const lower = m[0].toLowerCase();
        if (KEYWORDS.has(lower)) tokenType = 'keyword';
        else if (FUNCTIONS.has(lower) && /^\s*\(/.test(rest.slice(m[0].length))) tokenType = 'function';
      }
      push(tokens, tokenType, m[0]);
      rest = rest.slice(m[0].length);
      matched = true;
      break;
    }
    if (!matched) {
      push(tokens, 'text', rest[0]!);
      rest = rest.slice(1);
    }
  }
  return tokens;
}

function push(tokens: SqlToken[], type: SqlTokenType, text: string) {
  const last = tokens[tokens.length - 1];
  if (last && last.type === type && (type === 'text' || type === 'space')) last.text += text;
  else tokens.push({ type, text });
}

/** DuckDB errors name a line (`LINE 3: …`); the editor marks it. */
export function findErrorLine(message: string): number | null {
  const m = /LINE (\d+):/.exec(message);
  return m ? Number(m[1]) : null;
}
