package flusso.opensearch;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.settings.Settings;
import org.opensearch.node.Node;

/**
 * An OpenSearch server for flusso's tests, embedded from Maven jars: a single
 * node, or one member of a cluster of such nodes on 127.0.0.1.
 *
 * Usage (node.sh runs it, from target/lineN/ with the class path it lists in
 * target/lineN/classpath): java -Dflusso.node.dir=DIR -cp ... flusso.opensearch.EmbeddedNode DIR HTTP_PORT
 *
 * DIR is path.home and holds data/ (kept across restarts with the same DIR) and
 * node.log (log4j2.properties, which reads -Dflusso.node.dir).  Plain HTTP on
 * 127.0.0.1:HTTP_PORT, no security plugin.
 *
 * Alone, the node uses single-node discovery and binds an ephemeral transport
 * port: nobody has to know it.  If DIR/cluster.yml exists (node.sh cluster
 * writes it), the node is a member of a cluster instead: that file names the
 * cluster, the node, its transport port, the seed hosts and the initial
 * cluster managers, and overrides the settings below.
 *
 * Bootstrap (the refusal to run as root, the security manager, the bootstrap
 * checks) is not involved: we build the Node ourselves (ModuleNode, which
 * differs between the OpenSearch lines), so root is fine.  SIGTERM closes the
 * node cleanly.
 */
public final class EmbeddedNode {

    private EmbeddedNode() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).toAbsolutePath();
        Path cluster = dir.resolve("cluster.yml");
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
        if (Files.exists(cluster)) {
            settings.loadFromPath(cluster);
        } else {
            settings.put("discovery.type", "single-node");
        }

        Node node = new ModuleNode(settings.build());
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
