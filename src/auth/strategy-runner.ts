/**
 * What passport's `authenticate` middleware does with one strategy, a callback and no passport
 * session (`authenticate(name, { session: false }, callback)`), with its per-request part reduced
 * to one object holding the request's promise.
 *
 * Passport runs a strategy's `authenticate(request, options)` on a per-request object that
 * inherits from the strategy and carries the actions the strategy reports with: `success`,
 * `fail`, `error`, `pass` and `redirect`. Its middleware builds those actions for every request
 * as function expressions assigned to that object (`strategy.success = function …`). V8 allocates
 * a function literal assigned to a property straight in the old generation (it takes it for a
 * method set up once), and these hold the request, its reply and its callback: every request's
 * objects then survived each young-generation collection until the next full one. Here the
 * actions are methods defined once, on an object between the strategy and each attempt, and an
 * attempt holds only its promise's resolve and reject functions. The middleware's decoration of
 * the request (`req.login`, `req.isAuthenticated`, … for passport sessions) is not needed.
 */
export class StrategyRunner<T> {
  /** The strategy with the actions on top: what every attempt inherits. */
  private readonly actions: object;

  constructor(
    strategy: object,
    /** The refusal for a strategy that fails the request (passport's callback gets `false`). */
    failure: () => unknown,
  ) {
    this.actions = Object.create(strategy, {
      failure: { value: failure },
      success: { value: success },
      fail: { value: fail },
      error: { value: error },
      pass: { value: pass },
      redirect: { value: redirect },
    }) as object;
  }

  /**
   * Runs the strategy on `request`: the value it succeeds with, else its error, else `failure()`,
   * as passport's callback would report them.
   */
  run(request: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const attempt = Object.create(this.actions) as Attempt<T>;
      attempt.resolve = resolve;
      attempt.reject = reject;
      attempt.authenticate(request, OPTIONS);
    });
  }
}

/** The options passport hands the strategy: no passport session. */
const OPTIONS = Object.freeze({ session: false });

/** One run of the strategy: what it inherits, and its promise's two ends. */
interface Attempt<T> {
  resolve(value: T): void;
  reject(reason: unknown): void;
  failure(): unknown;
  authenticate(request: unknown, options: object): void;
}

/** Passport's callback gets the user; a falsy one is a failure. */
function success<T>(this: Attempt<T>, user: T): void {
  if (user) this.resolve(user);
  else this.reject(this.failure());
}

/** No strategy is left to try: passport's callback gets `false`, whatever the challenge. */
function fail<T>(this: Attempt<T>): void {
  this.reject(this.failure());
}

/** Passport's callback gets the error (a falsy one reads as no user: a failure). */
function error<T>(this: Attempt<T>, reason: unknown): void {
  this.reject(reason || this.failure());
}

/** A strategy that takes no decision: not one the guard runs (passport would call `next()`). */
function pass<T>(this: Attempt<T>): void {
  this.reject(new Error('The authentication strategy passed the request without a decision'));
}

/** A strategy that redirects: not one the guard runs (it would answer the request itself). */
function redirect<T>(this: Attempt<T>): void {
  this.reject(new Error('The authentication strategy asked for a redirect'));
}
