/*
 * A stand-in for the process environment, for the AWS credential chain's tests: an aws_env reads it through
 * fake_env_get ((aws_env){fake_env_get, &env}). Holds at most 16 variables; names and values are the caller's and must
 * outlive it.
 */
#ifndef NS_AWS_FAKE_ENV_H
#define NS_AWS_FAKE_ENV_H

typedef struct fake_env {
    const char *vars[16][2]; /* name, value; unused entries NULL */
} fake_env;

/* The value of name in the fake_env ctx, NULL when it is not set. */
const char *fake_env_get(void *ctx, const char *name);
/* Sets name to value, replacing an earlier value; a 17th name is dropped. */
void fake_env_set(fake_env *e, const char *name, const char *value);

#endif
