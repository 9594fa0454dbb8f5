/** Ollama's Modelfile as /api/create reads it from older clients: instructions, argument forms, and what is refused. */
import { describe, expect, it } from 'vitest';
import { parseModelfile } from '../../src-main/backend/ollama/modelfile-parse';

describe('parseModelfile', () => {
  it('reads each instruction, in any case, with bare, "quoted" and """multi-line""" arguments', () => {
    const parsed = parseModelfile(
      [
        '# a comment, then a blank line',
        '',
        'from ./model.gguf',
        'TEMPLATE """{% for m in messages %}',
        '{{ m.content }}{% endfor %}"""',
        'system "Answer in French."',
        'PARAMETER temperature 0.2',
        'PARAMETER stop "<|im_end|>"',
        'parameter stop ###',
        'PARAMETER num_ctx 4096',
        'PARAMETER penalize_newline false',
        'LICENSE """MIT',
        'or not"""',
      ].join('\n'),
    );
    expect(parsed).toEqual({
      from: './model.gguf',
      template: '{% for m in messages %}\n{{ m.content }}{% endfor %}',
      system: 'Answer in French.',
      license: 'MIT\nor not',
      parameters: { temperature: 0.2, stop: ['<|im_end|>', '###'], num_ctx: 4096, penalize_newline: false },
    });
  });

  it('refuses what Gufo cannot do and what does not parse, naming it', () => {
    expect(() => parseModelfile('FROM x\nADAPTER ./lora.gguf')).toThrow(
      'Modelfile: ADAPTER: Gufo has no LoRA adapters',
    );
    expect(() => parseModelfile('FROM x\nMESSAGE user hi')).toThrow('MESSAGE: Gufo has no stored messages');
    expect(() => parseModelfile('FROM x\nQUANTIZE q4')).toThrow('unknown instruction "QUANTIZE"');
    expect(() => parseModelfile('TEMPLATE """{{ x }}')).toThrow('TEMPLATE: a """ is not closed');
    expect(() => parseModelfile('PARAMETER temperature')).toThrow('PARAMETER temperature: give a name and a value');
  });
});
