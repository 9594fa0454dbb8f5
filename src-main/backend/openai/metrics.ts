/**
 * `GET /metrics`: what the server has done, in Prometheus' text format (version 0.0.4): requests
 * by endpoint and status, tokens in and out, speeds, time to first token, queue depth and load time
 * per model.
 */

type Labels = Record<string, string>;

/** One metric family: its series by label values. */
class Family {
  readonly #series = new Map<string, { labels: Labels; value: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'summary',
  ) {}

  #at(labels: Labels) {
    const key = JSON.stringify(labels);
    let s = this.#series.get(key);
    if (!s) this.#series.set(key, (s = { labels, value: 0, count: 0 }));
    return s;
  }

  add(labels: Labels, by: number): void {
    const s = this.#at(labels);
    s.value += by;
    s.count += 1;
  }

  set(labels: Labels, value: number): void {
    this.#at(labels).value = value;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const { labels, value, count } of this.#series.values()) {
      if (this.type === 'summary') {
        lines.push(`${this.name}_sum${labelText(labels)} ${value}`, `${this.name}_count${labelText(labels)} ${count}`);
      } else {
        lines.push(`${this.name}${labelText(labels)} ${value}`);
      }
    }
    return lines.join('\n');
  }
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** What one generation reports. */
export interface GenerationMetrics {
  model: string;
  promptTokens: number;
  completionTokens: number;
  ttftMs: number;
  prefillTokS: number;
  decodeTokS: number;
}

export class ServerMetrics {
  readonly #requests = new Family(
    'gufo_openai_requests_total',
    'Requests answered, by endpoint and HTTP status (499: the client left first).',
    'counter',
  );
  readonly #promptTokens = new Family(
    'gufo_openai_prompt_tokens_total',
    'Prompt tokens of the requests served.',
    'counter',
  );
  readonly #completionTokens = new Family('gufo_openai_completion_tokens_total', 'Tokens generated.', 'counter');
  readonly #decode = new Family(
    'gufo_openai_decode_tokens_per_second',
    'Decode speed of the last generation.',
    'gauge',
  );
  readonly #prefill = new Family(
    'gufo_openai_prefill_tokens_per_second',
    'Prompt evaluation speed of the last generation.',
    'gauge',
  );
  readonly #ttft = new Family(
    'gufo_openai_time_to_first_token_seconds',
    'Time from the engine starting on a request to its first token.',
    'summary',
  );
  readonly #queue = new Family('gufo_openai_queue_depth', 'Requests waiting or running.', 'gauge');
  readonly #load = new Family(
    'gufo_openai_model_load_seconds',
    'How long loading the model into its engine took, the last time.',
    'gauge',
  );

  request(endpoint: string, status: number): void {
    this.#requests.add({ endpoint, status: String(status) }, 1);
  }

  loaded(model: string, loadMs: number): void {
    this.#load.set({ model }, loadMs / 1000);
  }

  generated(g: GenerationMetrics): void {
    const model = { model: g.model };
    this.#promptTokens.add(model, g.promptTokens);
    this.#completionTokens.add(model, g.completionTokens);
    this.#ttft.add(model, g.ttftMs / 1000);
    this.#prefill.set(model, g.prefillTokS);
    this.#decode.set(model, g.decodeTokS);
  }

  queueDepth(model: string, depth: number): void {
    this.#queue.set({ model }, depth);
  }

  /** The text for `GET /metrics`. */
  render(): string {
    const families = [
      this.#requests,
      this.#promptTokens,
      this.#completionTokens,
      this.#decode,
      this.#prefill,
      this.#ttft,
      this.#queue,
      this.#load,
    ];
    return families.map((f) => f.render()).join('\n') + '\n';
  }
}
