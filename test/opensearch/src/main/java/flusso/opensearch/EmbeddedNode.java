package flusso.opensearch;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.transport.Netty4Plugin;

/**
 * A single-node OpenSearch server for flusso's tests, embedded from Maven jars.
 *
 * Usage (node.sh runs it): java -Dflusso.node.dir=DIR -cp 'target/classes:target/lib/*'
 *                              flusso.opensearch.EmbeddedNode DIR HTTP_PORT
 *
 * DIR is path.home and holds data/ (kept across restarts with the same DIR) and
 * node.log (log4j2.properties, which reads -Dflusso.node.dir).  Plain HTTP on
 * 127.0.0.1:HTTP_PORT, no security plugin.  The transport layer binds an
 * ephemeral port: with single-node discovery nobody has to know it.  SIGTERM
 * closes the node cleanly.
 *
 * Bootstrap (the refusal to run as root, the security manager, the bootstrap
 * checks) is not involved: we build the Node ourselves, so root is fine.
 */
public final class EmbeddedNode extends Node {

    private EmbeddedNode(Settings settings) {
        // The plugins a distribution loads from modules/, loaded here from the classpath.
        super(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "flusso-node"),
              List.of(Netty4Plugin.class, CommonAnalysisPlugin.class), true);
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).toAbsolutePath();
        Settings settings = Settings.builder()
            .put("cluster.name", "flusso-test")
            .put("node.name", "flusso-node")
            .put("path.home", dir.toString())
            .put("path.data", dir.resolve("data").toString())
            .put("path.logs", dir.resolve("logs").toString())
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", args[1])
            .put("transport.port", "0")
            // A test machine's disk may be fuller than the default watermarks allow.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            // Tests page with search_after sorted on _id.  On by default in 2.19, said
            // here because the default may change (it is off in Elasticsearch 8).
            .put("indices.id_field_data.enabled", true)
            .build();

        EmbeddedNode node = new EmbeddedNode(settings);
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
            node.client().admin().cluster().prepareHealth().setWaitForYellowStatus().get();
            System.exit(0);
        }
        closed.await();   // OpenSearch's own threads are daemons: keep the JVM alive
    }
}
