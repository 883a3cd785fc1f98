package org.elasticsearch.xpack.security;

import java.util.List;

import org.elasticsearch.common.settings.Settings;

/**
 * X-Pack security without its SAML transport actions, for an Elasticsearch
 * 9.x node: they need OpenSAML, which is not on Maven Central (pom.xml
 * leaves it out), and the node's injector loads every action's class when it
 * starts.  The SAML realm and its REST endpoints are then unusable; the file
 * realm, native users and API keys are untouched.  What differs between the
 * Elasticsearch lines lives in src/es8/ and src/es9/ (the type getActions
 * returns here); src/es/ is the rest.
 *
 * In this package because the server lets only plugins of org.elasticsearch.xpack
 * install a REST interceptor (Security authenticates REST requests with one).
 */
public final class SamlFreeSecurity extends Security {

    public SamlFreeSecurity(Settings settings) {
        super(settings);
    }

    @Override
    public List<ActionHandler> getActions() {
        return super.getActions().stream()
            .filter(handler -> !handler.getTransportAction().getName().startsWith("org.elasticsearch.xpack.security.action.saml."))
            .toList();
    }
}
