import { defineErrorCodes } from '#libs/common/error-codes.js';

export const AnalysisErrors = defineErrorCodes('analysis', {
  analysis_not_computed: {
    status: 404,
    title: 'Analysis not computed',
    description: 'No analysis run of this kind has succeeded for the version yet; start one with POST …/analysis-runs.',
  },
  not_clusterable: {
    status: 400,
    title: 'Version cannot be clustered',
    description:
      'The version has no text column with at least 2 non-empty values, or the column asked for has too few; GET …/cluster-runs/availability says why.',
  },
  cluster_run_not_finished: {
    status: 409,
    title: 'Cluster run not finished',
    description: 'The cluster run has not succeeded (yet): its result is not there; read the run for its state.',
  },
});
