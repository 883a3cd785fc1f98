package flusso.elasticsearch;

import java.util.List;
import java.util.function.Supplier;

import org.elasticsearch.Build;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * GET / (and HEAD /) of an embedded Elasticsearch node, the body a
 * distribution's rest-root module answers (its RestMainAction): name,
 * cluster_name, cluster_uuid, version{number, build_flavor, build_type,
 * build_hash, build_date, build_snapshot, lucene_version,
 * minimum_wire_compatibility_version, minimum_index_compatibility_version},
 * tagline.  rest-root is not published to Maven Central, and clients (flusso
 * among them) tell the distribution and its version from this answer.
 * RootPlugin (src/es8/, src/es9/: the plugin API differs) registers it.
 */
final class RootHandler extends BaseRestHandler {

    private final Supplier<ClusterState> state;

    RootHandler(Supplier<ClusterState> state) {
        this.state = state;
    }

    @Override
    public String getName() {
        return "flusso_root_action";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        return channel -> {
            if (request.method() == RestRequest.Method.HEAD) {
                channel.sendResponse(new RestResponse(RestStatus.OK, RestResponse.TEXT_CONTENT_TYPE, BytesArray.EMPTY));
                return;
            }
            ClusterState cluster = state.get();
            Build build = Build.current();
            XContentBuilder body = channel.newBuilder();
            body.startObject()
                .field("name", cluster.nodes().getLocalNode().getName())
                .field("cluster_name", cluster.getClusterName().value())
                .field("cluster_uuid", cluster.metadata().clusterUUID())
                .startObject("version")
                .field("number", build.qualifiedVersion())
                .field("build_flavor", build.flavor())
                .field("build_type", build.type().displayName())
                .field("build_hash", build.hash())
                .field("build_date", build.date())
                .field("build_snapshot", build.isSnapshot())
                .field("lucene_version", org.apache.lucene.util.Version.LATEST.toString())
                .field("minimum_wire_compatibility_version", build.minWireCompatVersion())
                .field("minimum_index_compatibility_version", build.minIndexCompatVersion())
                .endObject()
                .field("tagline", "You Know, for Search")
                .endObject();
            channel.sendResponse(new RestResponse(RestStatus.OK, body));
        };
    }
}
