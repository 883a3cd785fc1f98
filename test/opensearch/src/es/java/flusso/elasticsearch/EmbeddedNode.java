package flusso.elasticsearch;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.SecureString;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.node.ClasspathNode;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.netty4.Netty4Plugin;
import org.elasticsearch.xpack.core.XPackPlugin;
import org.elasticsearch.xpack.core.security.authc.support.Hasher;
import org.elasticsearch.xpack.security.SamlFreeSecurity;

/**
 * An Elasticsearch server for flusso's tests, embedded from Maven jars: a
 * single node, or one member of a cluster of such nodes on 127.0.0.1; the
 * counterpart of flusso.opensearch.EmbeddedNode, for the lines es8 and es9.
 *
 * Usage (node.sh runs it, from target/linees8/ or target/linees9/ with the
 * class path it lists there in classpath):
 * java -Dflusso.node.dir=DIR [-Dflusso.node.security=true] -cp ... flusso.elasticsearch.EmbeddedNode DIR HTTP_PORT
 *
 * DIR is path.home and holds data/ (kept across restarts with the same DIR),
 * config/ and node.log (log4j2.properties, which reads -Dflusso.node.dir).
 * Plain HTTP on 127.0.0.1:HTTP_PORT.  The plugins are classes on the class
 * path (ClasspathNode): Netty4 (HTTP and transport) and FlussoAnalysisPlugin
 * (what flusso's mappings take from analysis-common, which is not published).
 *
 * Alone, the node uses single-node discovery and binds an ephemeral transport
 * port.  If DIR/cluster.yml exists (node.sh cluster writes it), the node is a
 * member of a cluster instead: that file names the cluster, the node, its
 * transport port, the seed hosts and the initial master nodes, and overrides
 * the settings below.
 *
 * With -Dflusso.node.security=true the node also loads X-Pack (XPackPlugin,
 * and Security as SamlFreeSecurity: OpenSAML is not published) with security on, still plain HTTP (no TLS), a basic license, and
 * in the file realm one superuser: -Dflusso.node.user (flusso_test_admin) with
 * password -Dflusso.node.password (flusso-test-password), written to
 * DIR/config/users and users_roles at each start.  Requests then need basic
 * or API key credentials; without, 401.
 *
 * Bootstrap (the launcher's JVM options, the entitlement agent of 9.x, the
 * bootstrap checks, the keystore) is not involved: we build the Node
 * ourselves.  SIGTERM closes the node cleanly.
 */
public final class EmbeddedNode {

    private EmbeddedNode() {
    }

    public static void main(String[] args) throws Exception {
        // Elasticsearch's own logging API onto log4j, which the launcher sets up
        LogConfigurator.configureESLogging();
        Path dir = Path.of(args[0]).toAbsolutePath();
        Path cluster = dir.resolve("cluster.yml");
        boolean security = Boolean.getBoolean("flusso.node.security");
        Settings.Builder settings = Settings.builder()
            .put("cluster.name", "flusso-test")
            .put("node.name", "flusso-node")
            .put("path.home", dir.toString())
            .put("path.data", dir.resolve("data").toString())
            .put("path.logs", dir.resolve("logs").toString())
            .put("network.host", "127.0.0.1")
            .put("http.port", args[1])
            .put("transport.port", "0")
            // A test machine's disk may be fuller than the default watermarks allow.
            .put("cluster.routing.allocation.disk.threshold_enabled", false);
        List<Class<? extends Plugin>> plugins = new ArrayList<>(List.of(Netty4Plugin.class, FlussoAnalysisPlugin.class, RootPlugin.class));
        if (security) {
            settings.put("xpack.security.enabled", true)
                .put("xpack.security.http.ssl.enabled", false)
                .put("xpack.security.transport.ssl.enabled", false)
                .put("xpack.license.self_generated.type", "basic")
                .put("xpack.security.authc.api_key.enabled", true);
            users(dir.resolve("config"), System.getProperty("flusso.node.user", "flusso_test_admin"),
                  System.getProperty("flusso.node.password", "flusso-test-password"));
            // in this order: Security builds on what XPackPlugin's components set up
            plugins.add(XPackPlugin.class);
            plugins.add(SamlFreeSecurity.class);
        }
        if (Files.exists(cluster)) {
            settings.loadFromPath(cluster);
        } else {
            settings.put("discovery.type", "single-node");
        }

        Node node = new ClasspathNode(settings.build(), plugins);
        CountDownLatch closed = new CountDownLatch(1);
        // SIGTERM (node.sh stop) runs this hook: close the node, then let main return.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                closed.countDown();
            }
        }, "flusso-node-shutdown"));
        node.start();
        if (Boolean.getBoolean("flusso.node.train")) {
            // node.sh build: one start to yellow lists the classes for the JVM's
            // class-data-sharing archive (-XX:ArchiveClassesAtExit), then exit.
            node.client().admin().cluster().prepareHealth(TimeValue.timeValueSeconds(30)).setWaitForYellowStatus().get();
            System.exit(0);
        }
        closed.await();   // Elasticsearch's own threads are daemons: keep the JVM alive
    }

    // The file realm's one user, a superuser: config/users holds its bcrypt hash.
    private static void users(Path config, String user, String password) throws Exception {
        Files.createDirectories(config);
        char[] hash = Hasher.BCRYPT.hash(new SecureString(password.toCharArray()));
        Files.writeString(config.resolve("users"), user + ":" + new String(hash) + "\n", StandardCharsets.UTF_8);
        Files.writeString(config.resolve("users_roles"), "superuser:" + user + "\n", StandardCharsets.UTF_8);
    }
}
