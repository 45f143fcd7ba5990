/**
 * Whether a failed statement broke a unique constraint (SQLSTATE 23505), as TypeORM wraps it
 * (`driverError`) or as the driver raised it: services answer their own conflict code for it.
 */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null | undefined;
  return (e?.driverError?.code ?? e?.code) === '23505';
}
