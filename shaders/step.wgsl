// Written before each submission: where the batch starts in the sequence and how many tokens it has.
#struct StepUniform
