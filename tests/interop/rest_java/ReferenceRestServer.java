/*
 * A reference Iceberg REST catalog server for frazil's tests: the routes of the REST OpenAPI
 * (open-api/rest-catalog-open-api.yaml of Apache Iceberg 1.10.2) served by the JDK's HttpServer,
 * each handed to Iceberg Java's own request handling (org.apache.iceberg.rest.CatalogHandlers)
 * over a JdbcCatalog on SQLite, with requests and responses (de)serialized by RESTSerializers.
 * Iceberg's RESTCatalogServlet and RESTCatalogAdapter are test classes (not in the runtime jar),
 * so the route table, the error model and the transaction commit are written here, after the
 * OpenAPI and the behaviour of those classes.
 *
 * Beyond what those classes do, as the OpenAPI asks: bodiless answers are 204 (not 200); a
 * create or register in a namespace that does not exist is 404 (JdbcCatalog alone would create
 * the table); a malformed body is 400; every LoadTableResult carries an ETag and loadTable
 * answers 304 to a matching If-None-Match; routes of other operations are 400 "No route".
 * Not served: scan planning (plan, tasks), and loadTable's snapshots=refs (all are returned).
 *
 * Usage: java -cp <classes>:<jars> org.frazil.interop.rest.ReferenceRestServer
 *          --warehouse DIR --catalog-db FILE [--catalog-name NAME] [--prefix P]
 *          [--token T] [--oauth-client ID:SECRET] [--config-defaults JSON]
 *          [--config-overrides JSON] [--table-config JSON]
 * (the JSON options: objects of strings, for /v1/config's defaults and overrides and the
 * "config" of every LoadTableResult)
 * It binds 127.0.0.1 on a free port and prints one line "READY http://127.0.0.1:<port>" on
 * stdout when it serves; logs go to stderr. It exits when its stdin closes (so it never outlives
 * the test process that started it) or on SIGTERM.
 *
 * Besides the /v1 routes it serves a test control API (no authentication):
 *   POST /_test/faults    {"operation"?, "method"?, "path"? (regex searched in the raw path),
 *                          "status"? (0: close the connection without an answer), "type"?,
 *                          "message"?, "times"? (default 1, -1 forever), "when"? ("before",
 *                          default, or "after": run the request, then answer the fault),
 *                          "delay-ms"?} -> {"id": n}
 *   GET /_test/faults, DELETE /_test/faults (clear)
 *   GET /_test/requests   {"requests": [{"operation", "method", "path", "query", "headers",
 *                          "body", "status"}...]} (the last 10000 /v1 requests, oldest first)
 *   DELETE /_test/requests (clear)
 */
package org.frazil.interop.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Pattern;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.ClientPool;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.exceptions.UnprocessableEntityException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.jdbc.JdbcClientPool;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.ResourcePaths;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ImmutableLoadCredentialsResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.JsonAutoDetect;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.PropertyAccessor;
import org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.PropertyNamingStrategies;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ObjectNode;

public final class ReferenceRestServer {
  // The mapper of Iceberg's (package-private) RESTObjectMapper: field access, kebab-case names,
  // unknown fields ignored, and RESTSerializers for the types with their own JSON parsers.
  static final ObjectMapper MAPPER = new ObjectMapper();

  static {
    MAPPER.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    MAPPER.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    MAPPER.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
    RESTSerializers.registerAll(MAPPER);
  }

  // Exception -> HTTP status, as Iceberg's RESTCatalogAdapter maps them (its table), looked up
  // along the class hierarchy so subclasses (NoSuchIcebergTableException, NumberFormatException)
  // get their parent's code. Anything else is a 500.
  private static final Map<Class<?>, Integer> ERROR_CODES = new LinkedHashMap<>();

  static {
    ERROR_CODES.put(IllegalArgumentException.class, 400);
    ERROR_CODES.put(ValidationException.class, 400);
    ERROR_CODES.put(BadRequestException.class, 400);
    ERROR_CODES.put(NotAuthorizedException.class, 401);
    ERROR_CODES.put(ForbiddenException.class, 403);
    ERROR_CODES.put(NoSuchNamespaceException.class, 404);
    ERROR_CODES.put(NoSuchTableException.class, 404);
    ERROR_CODES.put(NoSuchViewException.class, 404);
    ERROR_CODES.put(UnsupportedOperationException.class, 406);
    ERROR_CODES.put(NamespaceNotEmptyException.class, 409);
    ERROR_CODES.put(AlreadyExistsException.class, 409);
    ERROR_CODES.put(CommitFailedException.class, 409);
    ERROR_CODES.put(UnprocessableEntityException.class, 422);
    ERROR_CODES.put(CommitStateUnknownException.class, 500);
    ERROR_CODES.put(ServiceUnavailableException.class, 503);
  }

  interface Handler {
    Object handle(Call call) throws Exception;
  }

  /** One route of the OpenAPI: its operationId, method and path template. */
  static final class Route {
    final String operation;
    final String method;
    final String template;
    final List<String> segments = new ArrayList<>();
    final List<String> variables = new ArrayList<>(); // per segment: its variable, or null
    final Handler handler;

    Route(String operation, String method, String template, String prefix, Handler handler) {
      this.operation = operation;
      this.method = method;
      this.template = template;
      this.handler = handler;
      for (String part : template.substring(1).split("/", -1)) {
        if (part.equals("{prefix}")) {
          // Without a configured prefix the segment is absent ("/v1/namespaces"), as clients
          // build their paths (RESTSessionCatalog, pyiceberg); with one it must match.
          if (prefix != null) {
            segments.add(prefix);
            variables.add(null);
          }
        } else if (part.startsWith("{") && part.endsWith("}")) {
          segments.add(part);
          variables.add(part.substring(1, part.length() - 1));
        } else {
          segments.add(part);
          variables.add(null);
        }
      }
    }

    /** The path variables (still URL-encoded), or null if the request is not this route's. */
    Map<String, String> match(String requestMethod, String[] rawSegments) {
      if (!method.equals(requestMethod) || rawSegments.length != segments.size()) {
        return null;
      }
      Map<String, String> vars = new HashMap<>();
      for (int i = 0; i < rawSegments.length; i++) {
        String variable = variables.get(i);
        if (variable != null) {
          vars.put(variable, rawSegments[i]);
        } else if (!segments.get(i).equals(decodeOrNull(rawSegments[i]))) {
          // compared decoded, so "a+b" and "a%20b" both name the prefix "a b"
          return null;
        }
      }
      return vars;
    }
  }

  private static String decodeOrNull(String raw) {
    try {
      return RESTUtil.decodeString(raw);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** One request being served. */
  static final class Call {
    final Route route;
    final Map<String, String> vars;
    final Map<String, String> query;
    final byte[] body;
    final String ifNoneMatch;

    Call(
        Route route,
        Map<String, String> vars,
        Map<String, String> query,
        byte[] body,
        String ifNoneMatch) {
      this.route = route;
      this.vars = vars;
      this.query = query;
      this.body = body;
      this.ifNoneMatch = ifNoneMatch;
    }

    /** The body as the route's request class, validated (400 when malformed). */
    <T> T request(Class<T> type) {
      T parsed;
      try {
        parsed = MAPPER.readValue(body, type);
      } catch (JsonProcessingException e) {
        throw new BadRequestException(
            e, "Malformed %s request body: %s", route.operation, e.getOriginalMessage());
      } catch (IOException e) {
        throw new BadRequestException(e, "Unreadable %s request body", route.operation);
      }
      if (parsed == null) {
        throw new BadRequestException("Missing %s request body", route.operation);
      }
      if (parsed instanceof RESTRequest) {
        ((RESTRequest) parsed).validate();
      }
      return parsed;
    }

    Namespace namespace() {
      return RESTUtil.decodeNamespace(vars.get("namespace"));
    }

    TableIdentifier ident(String variable) {
      return TableIdentifier.of(namespace(), RESTUtil.decodeString(vars.get(variable)));
    }
  }

  /** A fault injected through POST /_test/faults. */
  static final class Fault {
    final int id;
    final String operation;
    final String method;
    final Pattern path;
    final Integer status;
    final String type;
    final String message;
    final boolean after;
    final long delayMs;
    int remaining;

    Fault(int id, JsonNode spec) {
      this.id = id;
      this.operation = text(spec, "operation");
      this.method = text(spec, "method");
      String regex = text(spec, "path");
      this.path = regex == null ? null : Pattern.compile(regex);
      this.status = spec.hasNonNull("status") ? spec.get("status").asInt() : null;
      this.type = text(spec, "type");
      this.message = text(spec, "message");
      String when = text(spec, "when");
      if (when != null && !when.equals("before") && !when.equals("after")) {
        throw new IllegalArgumentException("fault \"when\" must be before or after: " + when);
      }
      this.after = "after".equals(when);
      this.delayMs = spec.hasNonNull("delay-ms") ? spec.get("delay-ms").asLong() : 0;
      this.remaining = spec.hasNonNull("times") ? spec.get("times").asInt() : 1;
      if (status == null && delayMs == 0) {
        throw new IllegalArgumentException("a fault needs a status or a delay-ms");
      }
    }

    boolean matches(String op, String requestMethod, String rawPath) {
      return remaining != 0
          && (operation == null || operation.equals(op))
          && (method == null || method.equalsIgnoreCase(requestMethod))
          && (path == null || path.matcher(rawPath).find());
    }

    ObjectNode toJson() {
      ObjectNode node = MAPPER.createObjectNode();
      node.put("id", id);
      node.put("operation", operation);
      node.put("method", method);
      node.put("path", path == null ? null : path.pattern());
      node.put("status", status);
      node.put("type", type);
      node.put("message", message);
      node.put("when", after ? "after" : "before");
      node.put("delay-ms", delayMs);
      node.put("remaining", remaining);
      return node;
    }

    private static String text(JsonNode spec, String field) {
      return spec.hasNonNull(field) ? spec.get(field).asText() : null;
    }
  }

  /**
   * A JdbcClientPool that opens a fresh connection for every catalog call. JdbcCatalog's
   * initialize leaves a ResultSet open on a pooled connection (its schema check), which keeps a
   * SQLite read transaction open there: that connection would go on reading the database as it
   * was, and an implicit write transaction on it is only committed once every statement of the
   * connection has finished. A connection per call (SQLite opens one in about a millisecond)
   * closes that ResultSet with it.
   */
  static final class FreshConnectionPool extends JdbcClientPool {
    private final String dbUrl;

    FreshConnectionPool(String dbUrl, Map<String, String> props) {
      super(1, dbUrl, props);
      this.dbUrl = dbUrl;
    }

    @Override
    public <R> R run(ClientPool.Action<R, Connection, SQLException> action)
        throws SQLException, InterruptedException {
      return run(action, false);
    }

    @Override
    public <R> R run(ClientPool.Action<R, Connection, SQLException> action, boolean retry)
        throws SQLException, InterruptedException {
      try (Connection connection = DriverManager.getConnection(dbUrl)) {
        return action.run(connection);
      }
    }
  }

  private final JdbcCatalog catalog;
  private final String prefix;
  private final String token;
  private final String oauthClient;
  private final Map<String, String> configDefaults;
  private final Map<String, String> configOverrides;
  private final Map<String, String> tableConfig;
  private final List<Route> routes = new ArrayList<>();
  // Reads share, writes are exclusive: a multi-table commit (validate every table, then commit
  // each) is then atomic for every other request of this server, and SQLite sees one writer.
  private final ReentrantReadWriteLock catalogLock = new ReentrantReadWriteLock(true);
  private final List<Fault> faults = new ArrayList<>();
  private int nextFaultId = 1;
  private final List<ObjectNode> requestLog = new ArrayList<>();
  private static final int MAX_LOGGED = 10000;

  ReferenceRestServer(JdbcCatalog catalog, Map<String, String> options) throws IOException {
    this.catalog = catalog;
    this.prefix = options.get("prefix");
    this.token = options.get("token");
    this.oauthClient = options.get("oauth-client");
    this.configDefaults = jsonMap(options.get("config-defaults"));
    this.configOverrides = jsonMap(options.get("config-overrides"));
    this.tableConfig = jsonMap(options.get("table-config"));
    addRoutes();
  }

  /** A JSON object of strings given as an option ({} when absent). */
  private static Map<String, String> jsonMap(String json) throws IOException {
    Map<String, String> map = new LinkedHashMap<>();
    if (json != null) {
      MAPPER
          .readTree(json)
          .fields()
          .forEachRemaining(e -> map.put(e.getKey(), e.getValue().asText()));
    }
    return map;
  }

  private void route(String operation, String method, String template, Handler handler) {
    routes.add(new Route(operation, method, template, prefix, handler));
  }

  private void addRoutes() {
    route("getConfig", "GET", "/v1/config", call -> config());
    route("getToken", "POST", "/v1/oauth/tokens", this::token);

    // Namespaces (OpenAPI /v1/{prefix}/namespaces...).
    route(
        "listNamespaces",
        "GET",
        ResourcePaths.V1_NAMESPACES,
        call -> {
          String parent = call.query.get("parent");
          Namespace ns =
              parent == null || parent.isEmpty()
                  ? Namespace.empty()
                  : Namespace.of(
                      RESTUtil.NAMESPACE_SPLITTER.splitToList(parent).toArray(new String[0]));
          String pageSize = call.query.get("pageSize");
          return pageSize == null
              ? CatalogHandlers.listNamespaces(catalog, ns)
              : CatalogHandlers.listNamespaces(catalog, ns, call.query.get("pageToken"), pageSize);
        });
    route(
        "createNamespace",
        "POST",
        ResourcePaths.V1_NAMESPACES,
        call ->
            CatalogHandlers.createNamespace(catalog, call.request(CreateNamespaceRequest.class)));
    route(
        "loadNamespaceMetadata",
        "GET",
        ResourcePaths.V1_NAMESPACE,
        call -> CatalogHandlers.loadNamespace(catalog, call.namespace()));
    route(
        "namespaceExists",
        "HEAD",
        ResourcePaths.V1_NAMESPACE,
        call -> {
          CatalogHandlers.namespaceExists(catalog, call.namespace());
          return null;
        });
    route(
        "dropNamespace",
        "DELETE",
        ResourcePaths.V1_NAMESPACE,
        call -> {
          CatalogHandlers.dropNamespace(catalog, call.namespace());
          return null;
        });
    route(
        "updateProperties",
        "POST",
        ResourcePaths.V1_NAMESPACE_PROPERTIES,
        call ->
            CatalogHandlers.updateNamespaceProperties(
                catalog,
                call.namespace(),
                call.request(UpdateNamespacePropertiesRequest.class)));

    // Tables.
    route(
        "listTables",
        "GET",
        ResourcePaths.V1_TABLES,
        call -> {
          String pageSize = call.query.get("pageSize");
          return pageSize == null
              ? CatalogHandlers.listTables(catalog, call.namespace())
              : CatalogHandlers.listTables(
                  catalog, call.namespace(), call.query.get("pageToken"), pageSize);
        });
    route(
        "createTable",
        "POST",
        ResourcePaths.V1_TABLES,
        call -> {
          CreateTableRequest request = call.request(CreateTableRequest.class);
          requireNamespace(call.namespace());
          return request.stageCreate()
              ? CatalogHandlers.stageTableCreate(catalog, call.namespace(), request)
              : CatalogHandlers.createTable(catalog, call.namespace(), request);
        });
    route(
        "registerTable",
        "POST",
        ResourcePaths.V1_TABLE_REGISTER,
        call -> {
          RegisterTableRequest request = call.request(RegisterTableRequest.class);
          requireNamespace(call.namespace());
          return CatalogHandlers.registerTable(catalog, call.namespace(), request);
        });
    route(
        "loadTable",
        "GET",
        ResourcePaths.V1_TABLE,
        call -> {
          LoadTableResponse response = CatalogHandlers.loadTable(catalog, call.ident("table"));
          // OpenAPI loadTable: 304 Not Modified when If-None-Match names the current ETag.
          String etag = etag(response);
          if (call.ifNoneMatch != null && etag != null) {
            for (String tag : call.ifNoneMatch.split(",")) {
              if (tag.trim().equals(etag) || tag.trim().equals("*")) {
                return new Answer(304, null, etag);
              }
            }
          }
          return response;
        });
    route(
        "updateTable",
        "POST",
        ResourcePaths.V1_TABLE,
        call ->
            CatalogHandlers.updateTable(
                catalog, call.ident("table"), call.request(UpdateTableRequest.class)));
    route(
        "dropTable",
        "DELETE",
        ResourcePaths.V1_TABLE,
        call -> {
          if (Boolean.parseBoolean(call.query.getOrDefault("purgeRequested", "false"))) {
            CatalogHandlers.purgeTable(catalog, call.ident("table"));
          } else {
            CatalogHandlers.dropTable(catalog, call.ident("table"));
          }
          return null;
        });
    route(
        "tableExists",
        "HEAD",
        ResourcePaths.V1_TABLE,
        call -> {
          CatalogHandlers.tableExists(catalog, call.ident("table"));
          return null;
        });
    route(
        "loadCredentials",
        "GET",
        ResourcePaths.V1_TABLE_CREDENTIALS,
        call -> {
          // A local warehouse has no storage credentials to vend: an empty list, once the
          // table is known to exist.
          CatalogHandlers.tableExists(catalog, call.ident("table"));
          return ImmutableLoadCredentialsResponse.builder().build();
        });
    route(
        "renameTable",
        "POST",
        ResourcePaths.V1_TABLE_RENAME,
        call -> {
          CatalogHandlers.renameTable(catalog, call.request(RenameTableRequest.class));
          return null;
        });
    route(
        "reportMetrics",
        "POST",
        ResourcePaths.V1_TABLE_METRICS,
        call -> {
          // Accepted once it parses (as Iceberg's adapter does); nothing is kept.
          call.request(ReportMetricsRequest.class);
          return null;
        });
    route(
        "commitTransaction",
        "POST",
        ResourcePaths.V1_TRANSACTIONS_COMMIT,
        call -> {
          commitTransaction(call.request(CommitTransactionRequest.class));
          return null;
        });

    // Views (JdbcCatalog is a ViewCatalog with jdbc.schema-version=V1).
    route(
        "listViews",
        "GET",
        ResourcePaths.V1_VIEWS,
        call -> {
          String pageSize = call.query.get("pageSize");
          return pageSize == null
              ? CatalogHandlers.listViews(catalog, call.namespace())
              : CatalogHandlers.listViews(
                  catalog, call.namespace(), call.query.get("pageToken"), pageSize);
        });
    route(
        "createView",
        "POST",
        ResourcePaths.V1_VIEWS,
        call -> {
          CreateViewRequest request = call.request(CreateViewRequest.class);
          requireNamespace(call.namespace());
          return CatalogHandlers.createView(catalog, call.namespace(), request);
        });
    route(
        "loadView",
        "GET",
        ResourcePaths.V1_VIEW,
        call -> CatalogHandlers.loadView(catalog, call.ident("view")));
    route(
        "replaceView",
        "POST",
        ResourcePaths.V1_VIEW,
        call ->
            CatalogHandlers.updateView(
                catalog, call.ident("view"), call.request(UpdateTableRequest.class)));
    route(
        "dropView",
        "DELETE",
        ResourcePaths.V1_VIEW,
        call -> {
          CatalogHandlers.dropView(catalog, call.ident("view"));
          return null;
        });
    route(
        "viewExists",
        "HEAD",
        ResourcePaths.V1_VIEW,
        call -> {
          CatalogHandlers.viewExists(catalog, call.ident("view"));
          return null;
        });
    route(
        "renameView",
        "POST",
        ResourcePaths.V1_VIEW_RENAME,
        call -> {
          CatalogHandlers.renameView(catalog, call.request(RenameTableRequest.class));
          return null;
        });
  }

  /**
   * The OpenAPI answers createTable, registerTable and createView in a namespace that does not
   * exist with 404 NoSuchNamespaceException; JdbcCatalog alone would create the table, the
   * namespace then existing implicitly (it lists the namespaces of its tables).
   */
  private void requireNamespace(Namespace namespace) {
    CatalogHandlers.namespaceExists(catalog, namespace);
  }

  private ConfigResponse config() {
    // Every catalog route is advertised (OpenAPI getConfig: "endpoints"), as templates.
    List<Endpoint> endpoints = new ArrayList<>();
    for (Route r : routes) {
      if (r.template.startsWith("/v1/{prefix}/")) {
        endpoints.add(Endpoint.create(r.method, r.template));
      }
    }
    ConfigResponse.Builder builder =
        ConfigResponse.builder()
            .withEndpoints(endpoints)
            .withDefaults(configDefaults)
            .withOverrides(configOverrides);
    if (prefix != null) {
      builder.withOverride("prefix", prefix);
    }
    return builder.build();
  }

  /**
   * POST /v1/oauth/tokens (deprecated in the OpenAPI, still what many clients call): the
   * client_credentials grant with the configured client id and secret, and the token exchange of
   * the current token, both answer the configured bearer token.
   */
  private Object token(Call call) {
    Map<String, String> form =
        RESTUtil.decodeFormData(new String(call.body, StandardCharsets.UTF_8));
    String grant = form.get("grant_type");
    if (token == null || oauthClient == null) {
      return oauthError(400, "invalid_request", "this server issues no tokens");
    }
    if ("client_credentials".equals(grant)) {
      String given = form.get("client_id") + ":" + form.get("client_secret");
      if (!oauthClient.equals(given)) {
        return oauthError(401, "invalid_client", "unknown client or wrong secret");
      }
    } else if ("urn:ietf:params:oauth:grant-type:token-exchange".equals(grant)) {
      if (!token.equals(form.get("subject_token"))) {
        return oauthError(401, "invalid_client", "unknown subject_token");
      }
    } else {
      return oauthError(400, "unsupported_grant_type", "unsupported grant_type: " + grant);
    }
    return OAuthTokenResponse.builder()
        .withToken(token)
        .withTokenType("bearer")
        .withIssuedTokenType("urn:ietf:params:oauth:token-type:access_token")
        .setExpirationInSeconds(3600)
        .build();
  }

  /** An OAuth2 error (RFC 6749 section 5.2; the OpenAPI's OAuthError). */
  private static Answer oauthError(int status, String error, String description) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("error", error);
    node.put("error_description", description);
    return new Answer(status, node);
  }

  /** A response with a status other than 200 and its JSON body. */
  static final class Answer {
    final int status;
    final Object body;
    final String etag;

    Answer(int status, Object body) {
      this(status, body, null);
    }

    Answer(int status, Object body, String etag) {
      this.status = status;
      this.body = body;
      this.etag = etag;
    }
  }

  /**
   * The ETag of a table's metadata (OpenAPI: "Identifies a unique version of the table
   * metadata"), sent with every LoadTableResult: a hash of its metadata file's location, which
   * every commit changes. None for a staged create, which has no metadata file yet.
   */
  static String etag(LoadTableResponse response) {
    String location = response.metadataLocation();
    if (location == null) {
      return null;
    }
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(location.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder("\"");
      for (int i = 0; i < 16; i++) {
        hex.append(String.format("%02x", digest[i]));
      }
      return hex.append('"').toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * POST /v1/{prefix}/transactions/commit: every table change is validated (its requirements
   * against the table's current metadata) and applied in memory first, and only if all of them
   * hold is each table committed. Under the exclusive catalog lock no other request of this
   * server runs in between; a failure while writing (I/O) can still leave earlier tables
   * committed, as in Iceberg's own adapter. A table named twice gets its changes in order.
   */
  private void commitTransaction(CommitTransactionRequest request) {
    Map<TableIdentifier, Staged> staged = new LinkedHashMap<>();
    for (UpdateTableRequest change : request.tableChanges()) {
      TableIdentifier ident = change.identifier();
      for (UpdateRequirement requirement : change.requirements()) {
        if (requirement instanceof UpdateRequirement.AssertTableDoesNotExist) {
          throw new UnsupportedOperationException(
              "Creating a table in a multi-table transaction is not supported: " + ident);
        }
      }
      Staged table = staged.get(ident);
      if (table == null) {
        Table loaded = catalog.loadTable(ident);
        if (!(loaded instanceof BaseTable)) {
          throw new IllegalStateException("Not a BaseTable: " + ident);
        }
        table = new Staged(((BaseTable) loaded).operations());
        staged.put(ident, table);
      }
      for (UpdateRequirement requirement : change.requirements()) {
        requirement.validate(table.updated);
      }
      TableMetadata.Builder builder = TableMetadata.buildFrom(table.updated);
      for (MetadataUpdate update : change.updates()) {
        update.applyTo(builder);
      }
      table.updated = builder.build();
      table.changed |= !table.updated.changes().isEmpty();
    }
    for (Staged table : staged.values()) {
      if (table.changed) {
        table.ops.commit(table.base, table.updated);
      }
    }
  }

  /** A table of a transaction: its operations, the metadata it started from, and the result. */
  static final class Staged {
    final TableOperations ops;
    final TableMetadata base;
    TableMetadata updated;
    boolean changed;

    Staged(TableOperations ops) {
      this.ops = ops;
      this.base = ops.current();
      this.updated = base;
    }
  }

  // ---- HTTP ----

  void handle(HttpExchange exchange) {
    try {
      String method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
      String rawPath = exchange.getRequestURI().getRawPath();
      String rawQuery = exchange.getRequestURI().getRawQuery();
      byte[] body = exchange.getRequestBody().readAllBytes();
      if (rawPath.startsWith("/_test/")) {
        control(exchange, method, rawPath, body);
      } else {
        serve(exchange, method, rawPath, rawQuery, body);
      }
    } catch (Throwable t) {
      System.err.println("ReferenceRestServer: failed to answer a request");
      t.printStackTrace();
    } finally {
      exchange.close();
    }
  }

  private void serve(
      HttpExchange exchange, String method, String rawPath, String rawQuery, byte[] body)
      throws IOException {
    Route route = null;
    Map<String, String> vars = null;
    String[] rawSegments = rawPath.substring(1).split("/", -1);
    for (Route candidate : routes) {
      vars = candidate.match(method, rawSegments);
      if (vars != null) {
        route = candidate;
        break;
      }
    }
    String operation = route == null ? null : route.operation;
    ObjectNode logged = log(exchange, operation, method, rawPath, rawQuery, body);

    Fault fault = takeFault(operation, method, rawPath);
    if (fault != null && fault.delayMs > 0) {
      sleep(fault.delayMs);
    }
    int status;
    if (fault != null && fault.status != null && !fault.after) {
      status = answerFault(exchange, method, fault);
    } else {
      Object result;
      try {
        if (route == null) {
          throw new BadRequestException("No route for request: %s %s", method, rawPath);
        }
        authorize(route, exchange.getRequestHeaders().getFirst("Authorization"));
        Call call =
            new Call(
                route,
                vars,
                parseQuery(rawQuery),
                body,
                exchange.getRequestHeaders().getFirst("If-None-Match"));
        result = run(call, method);
      } catch (Exception e) {
        result = errorAnswer(e);
      }
      if (fault != null && fault.status != null) {
        status = answerFault(exchange, method, fault);
      } else {
        status = answer(exchange, method, result);
      }
    }
    synchronized (requestLog) {
      logged.put("status", status);
    }
  }

  private Object run(Call call, String method) throws Exception {
    boolean reads = method.equals("GET") || method.equals("HEAD");
    Lock lock = reads ? catalogLock.readLock() : catalogLock.writeLock();
    lock.lock();
    try {
      return call.route.handler.handle(call);
    } finally {
      lock.unlock();
    }
  }

  private void authorize(Route route, String header) {
    if (token == null || route.operation.equals("getToken")) {
      return;
    }
    if (header == null) {
      throw new NotAuthorizedException("Not authorized: no Authorization header");
    }
    String[] parts = header.trim().split("\\s+", 2);
    if (parts.length != 2 || !parts[0].equalsIgnoreCase("Bearer") || !parts[1].equals(token)) {
      throw new NotAuthorizedException("Not authorized: wrong bearer token");
    }
  }

  /** The ErrorResponse for an exception (the OpenAPI's IcebergErrorResponse), logged if a 500. */
  static Answer errorAnswer(Exception e) {
    Integer code = null;
    for (Class<?> c = e.getClass(); c != null && code == null; c = c.getSuperclass()) {
      code = ERROR_CODES.get(c);
    }
    if (code == null) {
      code = 500;
    }
    if (code >= 500) {
      System.err.println("ReferenceRestServer: " + code + " for an exception");
      e.printStackTrace();
    }
    ErrorResponse error =
        ErrorResponse.builder()
            .responseCode(code)
            .withType(e.getClass().getSimpleName())
            .withMessage(e.getMessage())
            .withStackTrace(e)
            .build();
    return new Answer(code, error);
  }

  private int answer(HttpExchange exchange, String method, Object result) throws IOException {
    if (result instanceof LoadTableResponse) {
      LoadTableResponse response = (LoadTableResponse) result;
      if (!tableConfig.isEmpty()) {
        // --table-config: the LoadTableResult "config" the client must apply to the table.
        response =
            LoadTableResponse.builder()
                .withTableMetadata(response.tableMetadata())
                .addAllConfig(response.config())
                .addAllConfig(tableConfig)
                .addAllCredentials(response.credentials())
                .build();
      }
      result = new Answer(200, response, etag(response));
    }
    if (result instanceof Answer) {
      Answer a = (Answer) result;
      if (a.etag != null) {
        exchange.getResponseHeaders().set("ETag", a.etag);
      }
      return send(exchange, method, a.status, a.body);
    }
    // Routes without a response body answer 204 (OpenAPI: dropTable, renameTable, ...).
    return send(exchange, method, result == null ? 204 : 200, result);
  }

  private static int send(HttpExchange exchange, String method, int status, Object body)
      throws IOException {
    if (body == null || method.equals("HEAD")) {
      exchange.sendResponseHeaders(status, -1);
      return status;
    }
    byte[] bytes = MAPPER.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    if (status == 401) {
      exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
    }
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
    return status;
  }

  private static final Map<Integer, String> FAULT_TYPES =
      Map.of(
          400, "BadRequestException",
          401, "NotAuthorizedException",
          403, "ForbiddenException",
          404, "NoSuchTableException",
          409, "CommitFailedException",
          419, "AuthenticationTimeoutException",
          500, "InternalServerError",
          502, "BadGatewayException",
          503, "ServiceUnavailableException",
          504, "GatewayTimeoutException");

  private int answerFault(HttpExchange exchange, String method, Fault fault) throws IOException {
    if (fault.status == 0) {
      // Close the connection without answering: the client sees it dropped.
      exchange.close();
      return 0;
    }
    ErrorResponse error =
        ErrorResponse.builder()
            .responseCode(fault.status)
            .withType(
                fault.type != null
                    ? fault.type
                    : FAULT_TYPES.getOrDefault(fault.status, "InjectedFault"))
            .withMessage(fault.message != null ? fault.message : "injected fault " + fault.id)
            .build();
    return send(exchange, method, fault.status, error);
  }

  private Fault takeFault(String operation, String method, String rawPath) {
    synchronized (faults) {
      for (Fault fault : faults) {
        if (fault.matches(operation, method, rawPath)) {
          if (fault.remaining > 0) {
            fault.remaining -= 1;
          }
          if (fault.remaining == 0) {
            faults.remove(fault); // spent: GET /_test/faults lists the live ones
          }
          return fault;
        }
      }
    }
    return null;
  }

  private ObjectNode log(
      HttpExchange exchange,
      String operation,
      String method,
      String rawPath,
      String rawQuery,
      byte[] body) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("operation", operation);
    node.put("method", method);
    node.put("path", rawPath);
    node.put("query", rawQuery);
    ObjectNode headers = node.putObject("headers");
    exchange
        .getRequestHeaders()
        .forEach(
            (name, values) ->
                headers.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
    node.put("body", body.length == 0 ? null : new String(body, StandardCharsets.UTF_8));
    node.putNull("status");
    synchronized (requestLog) {
      requestLog.add(node);
      if (requestLog.size() > MAX_LOGGED) {
        requestLog.remove(0); // a long session keeps its latest requests
      }
    }
    return node;
  }

  private void control(HttpExchange exchange, String method, String rawPath, byte[] body)
      throws IOException {
    Object result;
    int status = 200;
    try {
      if (rawPath.equals("/_test/faults") && method.equals("POST")) {
        JsonNode spec = MAPPER.readTree(body);
        synchronized (faults) {
          Fault fault = new Fault(nextFaultId++, spec);
          faults.add(fault);
          ObjectNode node = MAPPER.createObjectNode();
          node.put("id", fault.id);
          result = node;
        }
      } else if (rawPath.equals("/_test/faults") && method.equals("GET")) {
        ObjectNode node = MAPPER.createObjectNode();
        ArrayNode list = node.putArray("faults");
        synchronized (faults) {
          faults.forEach(f -> list.add(f.toJson()));
        }
        result = node;
      } else if (rawPath.equals("/_test/faults") && method.equals("DELETE")) {
        synchronized (faults) {
          faults.clear();
        }
        result = null;
      } else if (rawPath.equals("/_test/requests") && method.equals("GET")) {
        ObjectNode node = MAPPER.createObjectNode();
        ArrayNode list = node.putArray("requests");
        synchronized (requestLog) {
          requestLog.forEach(r -> list.add(r.deepCopy()));
        }
        result = node;
      } else if (rawPath.equals("/_test/requests") && method.equals("DELETE")) {
        synchronized (requestLog) {
          requestLog.clear();
        }
        result = null;
      } else {
        throw new BadRequestException("No test control route: %s %s", method, rawPath);
      }
    } catch (Exception e) {
      Answer error = errorAnswer(e);
      status = error.status;
      result = error.body;
    }
    send(exchange, method, result == null ? 204 : status, result);
  }

  static Map<String, String> parseQuery(String rawQuery) {
    Map<String, String> query = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return query;
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      query.put(
          URLDecoder.decode(key, StandardCharsets.UTF_8),
          URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return query;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- main ----

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --option value pairs, got: " + args[i]);
      }
      options.put(args[i].substring(2), args[i + 1]);
    }
    String warehouse = required(options, "warehouse");
    String db = required(options, "catalog-db");
    String name = options.getOrDefault("catalog-name", "reference");

    String uri = "jdbc:sqlite:" + db;
    Map<String, String> props = new HashMap<>();
    props.put("uri", uri);
    props.put("warehouse", warehouse);
    // V1: the catalog table with a record type column, so JdbcCatalog is a ViewCatalog.
    props.put("jdbc.schema-version", "V1");
    JdbcCatalog catalog = new JdbcCatalog(null, p -> new FreshConnectionPool(uri, p), true);
    catalog.initialize(name, props);

    ReferenceRestServer server = new ReferenceRestServer(catalog, options);
    HttpServer http =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    ExecutorService executor = Executors.newFixedThreadPool(4);
    http.setExecutor(executor);
    http.createContext("/", server::handle);
    http.start();

    Runnable shutdown =
        () -> {
          http.stop(0);
          executor.shutdownNow();
          try {
            catalog.close();
          } catch (RuntimeException e) {
            e.printStackTrace();
          }
        };
    Runtime.getRuntime().addShutdownHook(new Thread(shutdown));
    Thread stdinWatch =
        new Thread(
            () -> {
              try {
                while (System.in.read() != -1) {
                  // the parent never writes; EOF means it closed the pipe or died
                }
              } catch (IOException e) {
                // a broken pipe is an EOF too
              }
              System.exit(0);
            },
            "stdin-watch");
    stdinWatch.setDaemon(true);
    stdinWatch.start();

    System.out.println("READY http://127.0.0.1:" + http.getAddress().getPort());
    System.out.flush();
  }

  private static String required(Map<String, String> options, String key) {
    String value = options.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing --" + key);
    }
    return value;
  }
}
