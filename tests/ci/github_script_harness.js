// Runs the body of an actions/github-script step against a fake GitHub API, for
// tests/ci/test_github_scripts.py. Usage: node github_script_harness.js SCRIPT SCENARIO.json
// The scenario gives context (eventName, payload, repo), env, pulls (by number), comments and
// artifacts. Prints {calls, outputs, failed, notices} as JSON: every API call made with its
// parameters, the step outputs set, the setFailed message (or null) and the notices.
'use strict';
const fs = require('fs');

const [scriptFile, scenarioFile] = process.argv.slice(2);
const script = fs.readFileSync(scriptFile, 'utf8');
const scenario = JSON.parse(fs.readFileSync(scenarioFile, 'utf8'));
const calls = [];
const outputs = {};
const notices = [];
let failed = null;

const core = {
  setOutput: (name, value) => { outputs[name] = value; },
  setFailed: (message) => { failed = String(message); },
  notice: (message) => { notices.push(String(message)); },
  warning: (message) => { notices.push(String(message)); },
  info: () => {},
};
const recorded = (name, fn) => async (params) => {
  calls.push({ name, params });
  return fn(params);
};
const github = {
  rest: {
    pulls: {
      get: recorded('pulls.get', async ({ pull_number: number }) => {
        const pr = (scenario.pulls || {})[String(number)];
        if (!pr) {
          const error = new Error('Not Found');
          error.status = 404;
          throw error;
        }
        return { data: pr };
      }),
    },
    issues: {
      listComments: recorded('issues.listComments', async () => ({ data: scenario.comments || [] })),
      updateComment: recorded('issues.updateComment', async () => ({ data: { html_url: 'updated' } })),
      createComment: recorded('issues.createComment', async () => ({ data: { html_url: 'created' } })),
    },
    actions: {
      listWorkflowRunArtifacts: recorded('actions.listWorkflowRunArtifacts',
        async () => ({ data: { total_count: 0, artifacts: scenario.artifacts || [] } })),
    },
  },
  // octokit's paginate returns the items of every page, whatever key holds them
  paginate: async (method, params) => {
    const { data } = await method(params);
    return Array.isArray(data) ? data : data.artifacts;
  },
};
Object.assign(process.env, scenario.env || {});
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;

(async () => {
  try {
    await new AsyncFunction('require', 'github', 'context', 'core', script)(
      require, github, scenario.context, core);
  } catch (error) {
    failed = `threw: ${error.message}`;
  }
  process.stdout.write(JSON.stringify({ calls, outputs, failed, notices }));
})();
