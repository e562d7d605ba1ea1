import { takeViolations } from 'test/support/contract';

/** Fails the test (or, after the last one, the file) whose answers the document does not allow. */
function failOnViolations(): void {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(`Answers that openapi.json does not allow:\n${violations.join('\n')}`);
  }
}

afterEach(failOnViolations);
afterAll(failOnViolations);
