// Written before each submission: where the batch starts in the sequence and how many tokens it has.
struct Step {
  pos0: u32,
  nTokens: u32,
  _pad0: u32,
  _pad1: u32,
}
