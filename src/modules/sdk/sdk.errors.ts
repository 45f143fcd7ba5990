import { defineErrorCodes } from '#libs/common/error-codes.js';

export const SdkErrors = defineErrorCodes('sdk', {
  sdk_version_not_found: {
    status: 404,
    title: 'SDK version not found',
    description:
      'No SDK or example bundle has this version; `detail` and `available` list the versions served (`latest` names the newest).',
  },
  sdk_bundle_missing: {
    status: 503,
    title: 'SDK bundle missing',
    description: 'The service was deployed without its sdk/ or examples/ folder; redeploy with them.',
  },
  sdk_package_missing: {
    status: 503,
    title: 'SDK package not built',
    description:
      'The service was built without packing the SDK (`npm run build` writes dist/sdk/<name>-<version>.tgz); rebuild it, or build the package from the SDK bundle (`npm install && npm pack`).',
  },
});
