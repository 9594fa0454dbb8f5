/** A vocabulary Gufo cannot read or tokenize with (its own module so that every tokenizer part can throw it). */
export class VocabError extends Error {
  override readonly name = 'VocabError';
}
