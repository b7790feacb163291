// Bootstrap for the embedded GraphiQL page served by tuttid/graph/graphiql.
// Not from npm. It lives in its own file so the page's Content-Security-Policy
// needs no 'unsafe-inline' for scripts. The endpoint comes from the
// data-endpoint attribute of #graphiql, written by the Go handler.
(function () {
  'use strict';

  var root = document.getElementById('graphiql');
  if (!root) {
    return;
  }

  function fail(text) {
    var p = document.createElement('p');
    p.className = 'tuttid-graphiql-message';
    p.textContent = text;
    root.replaceChildren(p);
  }

  if (typeof window.React === 'undefined' ||
      typeof window.ReactDOM === 'undefined' ||
      typeof window.GraphiQL === 'undefined') {
    fail('GraphiQL failed to load its scripts.');
    return;
  }

  var endpoint = root.getAttribute('data-endpoint') || '/query';
  var httpURL = new URL(endpoint, window.location.href);

  // Subscriptions go over graphql-ws (graphql-transport-ws), whose client is
  // bundled in graphiql.min.js, at the same path with ws:// or wss://.
  var wsURL = new URL(httpURL.href);
  wsURL.protocol = httpURL.protocol === 'https:' ? 'wss:' : 'ws:';

  var fetcher = window.GraphiQL.createFetcher({
    url: httpURL.href,
    subscriptionUrl: wsURL.href
  });

  window.ReactDOM.createRoot(root).render(
    window.React.createElement(window.GraphiQL, {
      fetcher: fetcher,
      defaultEditorToolsVisibility: true
    })
  );
})();
