/**
 * The protobuf schemas of the built-in kinds clients send as `application/vnd.kubernetes.protobuf`,
 * as a table of messages → fields. Field numbers and types are those of k8s.io/api and
 * k8s.io/apimachinery `generated.proto` (1.33, the descriptors compiled into kubectl 1.33; numbers
 * never change between releases, fields are only added). Names are the JSON names the same Go
 * structs marshal to, so a decoded message is the JSON the client would have sent.
 *
 * One entry per message: space-separated `name=number[:type][*]`, where
 * - `type` is `string` when absent; scalars `bool`, `int32`, `int64`, `double`, `bytes` (base64 in
 *   JSON); `Time`, `MicroTime`, `Duration`, `IntOrString`, `Quantity`, `Raw` (RawExtension),
 *   `FieldsV1` (apimachinery types with their own JSON form); `map` (string → string) or
 *   `map:<type>`; otherwise another message of this table;
 * - `*` marks a repeated field;
 * - `!` after the name keeps a zero value: the Go field is a pointer or has no `omitempty`, and
 *   zero means something there (`replicas: 0`, `automountServiceAccountToken: false`). Other
 *   zero scalars are dropped, as Go's JSON encoding drops them — the Go marshaller writes every
 *   non-pointer field, so the wire alone cannot tell;
 * - the name `...` is an embedded struct (`json:",inline"`): its fields land in the parent.
 */

const MESSAGES: Record<string, string> = {
  'apps.DaemonSet': 'metadata=1:meta.ObjectMeta spec=2:apps.DaemonSetSpec status=3:apps.DaemonSetStatus',
  'apps.DaemonSetCondition': 'type=1 status=2 lastTransitionTime=3:Time reason=4 message=5',
  'apps.DaemonSetSpec':
    'selector=1:meta.LabelSelector template=2:core.PodTemplateSpec updateStrategy=3:apps.DaemonSetUpdateStrategy minReadySeconds=4:int32 revisionHistoryLimit!=6:int32',
  'apps.DaemonSetStatus':
    'currentNumberScheduled=1:int32 numberMisscheduled=2:int32 desiredNumberScheduled=3:int32 numberReady=4:int32 observedGeneration=5:int64 updatedNumberScheduled=6:int32 numberAvailable=7:int32 numberUnavailable=8:int32 collisionCount=9:int32 conditions=10:apps.DaemonSetCondition*',
  'apps.DaemonSetUpdateStrategy': 'type=1 rollingUpdate=2:apps.RollingUpdateDaemonSet',
  'apps.Deployment': 'metadata=1:meta.ObjectMeta spec=2:apps.DeploymentSpec status=3:apps.DeploymentStatus',
  'apps.DeploymentCondition':
    'type=1 status=2 lastUpdateTime=6:Time lastTransitionTime=7:Time reason=4 message=5',
  'apps.DeploymentSpec':
    'replicas!=1:int32 selector=2:meta.LabelSelector template=3:core.PodTemplateSpec strategy=4:apps.DeploymentStrategy minReadySeconds=5:int32 revisionHistoryLimit!=6:int32 paused=7:bool progressDeadlineSeconds!=9:int32',
  'apps.DeploymentStatus':
    'observedGeneration=1:int64 replicas=2:int32 updatedReplicas=3:int32 readyReplicas=7:int32 availableReplicas=4:int32 unavailableReplicas=5:int32 terminatingReplicas=9:int32 conditions=6:apps.DeploymentCondition* collisionCount=8:int32',
  'apps.DeploymentStrategy': 'type=1 rollingUpdate=2:apps.RollingUpdateDeployment',
  'apps.RollingUpdateDaemonSet': 'maxUnavailable=1:IntOrString maxSurge=2:IntOrString',
  'apps.RollingUpdateDeployment': 'maxUnavailable=1:IntOrString maxSurge=2:IntOrString',
  'authentication.BoundObjectReference': 'kind=1 apiVersion=2 name=3 uid=4',
  'authentication.TokenRequest':
    'metadata=1:meta.ObjectMeta spec=2:authentication.TokenRequestSpec status=3:authentication.TokenRequestStatus',
  'authentication.TokenRequestSpec':
    'audiences=1* expirationSeconds!=4:int64 boundObjectRef=3:authentication.BoundObjectReference',
  'authentication.TokenRequestStatus': 'token=1 expirationTimestamp=2:Time',
  'batch.CronJob': 'metadata=1:meta.ObjectMeta spec=2:batch.CronJobSpec status=3:batch.CronJobStatus',
  'batch.CronJobSpec':
    'schedule=1 timeZone=8 startingDeadlineSeconds!=2:int64 concurrencyPolicy=3 suspend!=4:bool jobTemplate=5:batch.JobTemplateSpec successfulJobsHistoryLimit!=6:int32 failedJobsHistoryLimit!=7:int32',
  'batch.CronJobStatus': 'active=1:core.ObjectReference* lastScheduleTime=4:Time lastSuccessfulTime=5:Time',
  'batch.Job': 'metadata=1:meta.ObjectMeta spec=2:batch.JobSpec status=3:batch.JobStatus',
  'batch.JobCondition': 'type=1 status=2 lastProbeTime=3:Time lastTransitionTime=4:Time reason=5 message=6',
  'batch.JobSpec':
    'parallelism!=1:int32 completions!=2:int32 activeDeadlineSeconds!=3:int64 podFailurePolicy=11:batch.PodFailurePolicy successPolicy=16:batch.SuccessPolicy backoffLimit!=7:int32 backoffLimitPerIndex!=12:int32 maxFailedIndexes!=13:int32 selector=4:meta.LabelSelector manualSelector!=5:bool template=6:core.PodTemplateSpec ttlSecondsAfterFinished!=8:int32 completionMode=9 suspend!=10:bool podReplacementPolicy=14 managedBy=15',
  'batch.JobStatus':
    'conditions=1:batch.JobCondition* startTime=2:Time completionTime=3:Time active=4:int32 succeeded=5:int32 failed=6:int32 terminating=11:int32 completedIndexes=7 failedIndexes=10 uncountedTerminatedPods=8:batch.UncountedTerminatedPods ready=9:int32',
  'batch.JobTemplateSpec': 'metadata=1:meta.ObjectMeta spec=2:batch.JobSpec',
  'batch.PodFailurePolicy': 'rules=1:batch.PodFailurePolicyRule*',
  'batch.PodFailurePolicyOnExitCodesRequirement': 'containerName=1 operator=2 values=3:int32*',
  'batch.PodFailurePolicyOnPodConditionsPattern': 'type=1 status=2',
  'batch.PodFailurePolicyRule':
    'action=1 onExitCodes=2:batch.PodFailurePolicyOnExitCodesRequirement onPodConditions=3:batch.PodFailurePolicyOnPodConditionsPattern*',
  'batch.SuccessPolicy': 'rules=1:batch.SuccessPolicyRule*',
  'batch.SuccessPolicyRule': 'succeededIndexes=1 succeededCount=2:int32',
  'batch.UncountedTerminatedPods': 'succeeded=1* failed=2*',
  'coordination.Lease': 'metadata=1:meta.ObjectMeta spec=2:coordination.LeaseSpec',
  'coordination.LeaseSpec':
    'holderIdentity=1 leaseDurationSeconds!=2:int32 acquireTime=3:MicroTime renewTime=4:MicroTime leaseTransitions!=5:int32 strategy=6 preferredHolder=7',
  'core.AWSElasticBlockStoreVolumeSource': 'volumeID=1 fsType=2 partition=3:int32 readOnly=4:bool',
  'core.Affinity':
    'nodeAffinity=1:core.NodeAffinity podAffinity=2:core.PodAffinity podAntiAffinity=3:core.PodAntiAffinity',
  'core.AppArmorProfile': 'type=1 localhostProfile=2',
  'core.AttachedVolume': 'name=1 devicePath=2',
  'core.AzureDiskVolumeSource': 'diskName=1 diskURI=2 cachingMode=3 fsType=4 readOnly=5:bool kind=6',
  'core.AzureFileVolumeSource': 'secretName=1 shareName=2 readOnly=3:bool',
  'core.CSIVolumeSource':
    'driver=1 readOnly=2:bool fsType=3 volumeAttributes=4:map nodePublishSecretRef=5:core.LocalObjectReference',
  'core.Capabilities': 'add=1* drop=2*',
  'core.CephFSVolumeSource':
    'monitors=1* path=2 user=3 secretFile=4 secretRef=5:core.LocalObjectReference readOnly=6:bool',
  'core.CinderVolumeSource': 'volumeID=1 fsType=2 readOnly=3:bool secretRef=4:core.LocalObjectReference',
  'core.ClientIPConfig': 'timeoutSeconds=1:int32',
  'core.ClusterTrustBundleProjection':
    'name=1 signerName=2 labelSelector=3:meta.LabelSelector optional=5:bool path=4',
  'core.ConfigMap': 'metadata=1:meta.ObjectMeta immutable!=4:bool data=2:map binaryData=3:map:bytes',
  'core.ConfigMapEnvSource': '...=1:core.LocalObjectReference optional=2:bool',
  'core.ConfigMapKeySelector': '...=1:core.LocalObjectReference key=2 optional=3:bool',
  'core.ConfigMapNodeConfigSource': 'namespace=1 name=2 uid=3 resourceVersion=4 kubeletConfigKey=5',
  'core.ConfigMapProjection': '...=1:core.LocalObjectReference items=2:core.KeyToPath* optional=4:bool',
  'core.ConfigMapVolumeSource':
    '...=1:core.LocalObjectReference items=2:core.KeyToPath* defaultMode!=3:int32 optional=4:bool',
  'core.Container':
    'name=1 image=2 command=3* args=4* workingDir=5 ports=6:core.ContainerPort* envFrom=19:core.EnvFromSource* env=7:core.EnvVar* resources=8:core.ResourceRequirements resizePolicy=23:core.ContainerResizePolicy* restartPolicy=24 volumeMounts=9:core.VolumeMount* volumeDevices=21:core.VolumeDevice* livenessProbe=10:core.Probe readinessProbe=11:core.Probe startupProbe=22:core.Probe lifecycle=12:core.Lifecycle terminationMessagePath=13 terminationMessagePolicy=20 imagePullPolicy=14 securityContext=15:core.SecurityContext stdin=16:bool stdinOnce=17:bool tty=18:bool',
  'core.ContainerImage': 'names=1* sizeBytes=2:int64',
  'core.ContainerPort': 'name=1 hostPort=2:int32 containerPort!=3:int32 protocol=4 hostIP=5',
  'core.ContainerResizePolicy': 'resourceName=1 restartPolicy=2',
  'core.ContainerState':
    'waiting=1:core.ContainerStateWaiting running=2:core.ContainerStateRunning terminated=3:core.ContainerStateTerminated',
  'core.ContainerStateRunning': 'startedAt=1:Time',
  'core.ContainerStateTerminated':
    'exitCode!=1:int32 signal=2:int32 reason=3 message=4 startedAt=5:Time finishedAt=6:Time containerID=7',
  'core.ContainerStateWaiting': 'reason=1 message=2',
  'core.ContainerStatus':
    'name=1 state=2:core.ContainerState lastState=3:core.ContainerState ready!=4:bool restartCount!=5:int32 image=6 imageID=7 containerID=8 started=9:bool allocatedResources=10:map:Quantity resources=11:core.ResourceRequirements volumeMounts=12:core.VolumeMountStatus* user=13:core.ContainerUser allocatedResourcesStatus=14:core.ResourceStatus* stopSignal=15',
  'core.ContainerUser': 'linux=1:core.LinuxContainerUser',
  'core.DaemonEndpoint': 'Port=1:int32',
  'core.DownwardAPIProjection': 'items=1:core.DownwardAPIVolumeFile*',
  'core.DownwardAPIVolumeFile':
    'path=1 fieldRef=2:core.ObjectFieldSelector resourceFieldRef=3:core.ResourceFieldSelector mode=4:int32',
  'core.DownwardAPIVolumeSource': 'items=1:core.DownwardAPIVolumeFile* defaultMode!=2:int32',
  'core.EmptyDirVolumeSource': 'medium=1 sizeLimit=2:Quantity',
  'core.EndpointAddress': 'ip=1 hostname=3 nodeName=4 targetRef=2:core.ObjectReference',
  'core.EndpointPort': 'name=1 port!=2:int32 protocol=3 appProtocol=4',
  'core.EndpointSubset':
    'addresses=1:core.EndpointAddress* notReadyAddresses=2:core.EndpointAddress* ports=3:core.EndpointPort*',
  'core.Endpoints': 'metadata=1:meta.ObjectMeta subsets=2:core.EndpointSubset*',
  'core.EnvFromSource': 'prefix=1 configMapRef=2:core.ConfigMapEnvSource secretRef=3:core.SecretEnvSource',
  'core.EnvVar': 'name=1 value=2 valueFrom=3:core.EnvVarSource',
  'core.EnvVarSource':
    'fieldRef=1:core.ObjectFieldSelector resourceFieldRef=2:core.ResourceFieldSelector configMapKeyRef=3:core.ConfigMapKeySelector secretKeyRef=4:core.SecretKeySelector',
  'core.EphemeralContainer': '...=1:core.EphemeralContainerCommon targetContainerName=2',
  'core.EphemeralContainerCommon':
    'name=1 image=2 command=3* args=4* workingDir=5 ports=6:core.ContainerPort* envFrom=19:core.EnvFromSource* env=7:core.EnvVar* resources=8:core.ResourceRequirements resizePolicy=23:core.ContainerResizePolicy* restartPolicy=24 volumeMounts=9:core.VolumeMount* volumeDevices=21:core.VolumeDevice* livenessProbe=10:core.Probe readinessProbe=11:core.Probe startupProbe=22:core.Probe lifecycle=12:core.Lifecycle terminationMessagePath=13 terminationMessagePolicy=20 imagePullPolicy=14 securityContext=15:core.SecurityContext stdin=16:bool stdinOnce=17:bool tty=18:bool',
  'core.EphemeralVolumeSource': 'volumeClaimTemplate=1:core.PersistentVolumeClaimTemplate',
  'core.Event':
    'metadata=1:meta.ObjectMeta involvedObject=2:core.ObjectReference reason=3 message=4 source=5:core.EventSource firstTimestamp=6:Time lastTimestamp=7:Time count=8:int32 type=9 eventTime=10:MicroTime series=11:core.EventSeries action=12 related=13:core.ObjectReference reportingComponent=14 reportingInstance=15',
  'core.EventSeries': 'count=1:int32 lastObservedTime=2:MicroTime',
  'core.EventSource': 'component=1 host=2',
  'core.ExecAction': 'command=1*',
  'core.FCVolumeSource': 'targetWWNs=1* lun=2:int32 fsType=3 readOnly=4:bool wwids=5*',
  'core.FlexVolumeSource':
    'driver=1 fsType=2 secretRef=3:core.LocalObjectReference readOnly=4:bool options=5:map',
  'core.FlockerVolumeSource': 'datasetName=1 datasetUUID=2',
  'core.GCEPersistentDiskVolumeSource': 'pdName=1 fsType=2 partition=3:int32 readOnly=4:bool',
  'core.GRPCAction': 'port=1:int32 service=2',
  'core.GitRepoVolumeSource': 'repository=1 revision=2 directory=3',
  'core.GlusterfsVolumeSource': 'endpoints=1 path=2 readOnly=3:bool',
  'core.HTTPGetAction': 'path=1 port=2:IntOrString host=3 scheme=4 httpHeaders=5:core.HTTPHeader*',
  'core.HTTPHeader': 'name=1 value=2',
  'core.HostAlias': 'ip=1 hostnames=2*',
  'core.HostIP': 'ip=1',
  'core.HostPathVolumeSource': 'path=1 type=2',
  'core.ISCSIVolumeSource':
    'targetPortal=1 iqn=2 lun=3:int32 iscsiInterface=4 fsType=5 readOnly=6:bool portals=7* chapAuthDiscovery=8:bool chapAuthSession=11:bool secretRef=10:core.LocalObjectReference initiatorName=12',
  'core.ImageVolumeSource': 'reference=1 pullPolicy=2',
  'core.KeyToPath': 'key=1 path=2 mode!=3:int32',
  'core.Lifecycle': 'postStart=1:core.LifecycleHandler preStop=2:core.LifecycleHandler stopSignal=3',
  'core.LifecycleHandler':
    'exec=1:core.ExecAction httpGet=2:core.HTTPGetAction tcpSocket=3:core.TCPSocketAction sleep=4:core.SleepAction',
  'core.LinuxContainerUser': 'uid=1:int64 gid=2:int64 supplementalGroups=3:int64*',
  'core.LoadBalancerIngress': 'ip=1 hostname=2 ipMode=3 ports=4:core.PortStatus*',
  'core.LoadBalancerStatus': 'ingress=1:core.LoadBalancerIngress*',
  'core.LocalObjectReference': 'name=1',
  'core.NFSVolumeSource': 'server=1 path=2 readOnly=3:bool',
  'core.Namespace': 'metadata=1:meta.ObjectMeta spec=2:core.NamespaceSpec status=3:core.NamespaceStatus',
  'core.NamespaceCondition': 'type=1 status=2 lastTransitionTime=4:Time reason=5 message=6',
  'core.NamespaceSpec': 'finalizers=1*',
  'core.NamespaceStatus': 'phase=1 conditions=2:core.NamespaceCondition*',
  'core.Node': 'metadata=1:meta.ObjectMeta spec=2:core.NodeSpec status=3:core.NodeStatus',
  'core.NodeAddress': 'type=1 address=2',
  'core.NodeAffinity':
    'requiredDuringSchedulingIgnoredDuringExecution=1:core.NodeSelector preferredDuringSchedulingIgnoredDuringExecution=2:core.PreferredSchedulingTerm*',
  'core.NodeCondition':
    'type=1 status=2 lastHeartbeatTime=3:Time lastTransitionTime=4:Time reason=5 message=6',
  'core.NodeConfigSource': 'configMap=2:core.ConfigMapNodeConfigSource',
  'core.NodeConfigStatus':
    'assigned=1:core.NodeConfigSource active=2:core.NodeConfigSource lastKnownGood=3:core.NodeConfigSource error=4',
  'core.NodeDaemonEndpoints': 'kubeletEndpoint=1:core.DaemonEndpoint',
  'core.NodeFeatures': 'supplementalGroupsPolicy=1:bool',
  'core.NodeRuntimeHandler': 'name=1 features=2:core.NodeRuntimeHandlerFeatures',
  'core.NodeRuntimeHandlerFeatures': 'recursiveReadOnlyMounts=1:bool userNamespaces=2:bool',
  'core.NodeSelector': 'nodeSelectorTerms=1:core.NodeSelectorTerm*',
  'core.NodeSelectorRequirement': 'key=1 operator=2 values=3*',
  'core.NodeSelectorTerm':
    'matchExpressions=1:core.NodeSelectorRequirement* matchFields=2:core.NodeSelectorRequirement*',
  'core.NodeSpec':
    'podCIDR=1 podCIDRs=7* providerID=3 unschedulable=4:bool taints=5:core.Taint* configSource=6:core.NodeConfigSource externalID=2',
  'core.NodeStatus':
    'capacity=1:map:Quantity allocatable=2:map:Quantity phase=3 conditions=4:core.NodeCondition* addresses=5:core.NodeAddress* daemonEndpoints=6:core.NodeDaemonEndpoints nodeInfo=7:core.NodeSystemInfo images=8:core.ContainerImage* volumesInUse=9* volumesAttached=10:core.AttachedVolume* config=11:core.NodeConfigStatus runtimeHandlers=12:core.NodeRuntimeHandler* features=13:core.NodeFeatures',
  'core.NodeSwapStatus': 'capacity=1:int64',
  'core.NodeSystemInfo':
    'machineID=1 systemUUID=2 bootID=3 kernelVersion=4 osImage=5 containerRuntimeVersion=6 kubeletVersion=7 kubeProxyVersion=8 operatingSystem=9 architecture=10 swap=11:core.NodeSwapStatus',
  'core.ObjectFieldSelector': 'apiVersion=1 fieldPath=2',
  'core.ObjectReference': 'kind=1 namespace=2 name=3 uid=4 apiVersion=5 resourceVersion=6 fieldPath=7',
  'core.PersistentVolumeClaimSpec':
    'accessModes=1* selector=4:meta.LabelSelector resources=2:core.VolumeResourceRequirements volumeName=3 storageClassName=5 volumeMode=6 dataSource=7:core.TypedLocalObjectReference dataSourceRef=8:core.TypedObjectReference volumeAttributesClassName=9',
  'core.PersistentVolumeClaimTemplate': 'metadata=1:meta.ObjectMeta spec=2:core.PersistentVolumeClaimSpec',
  'core.PersistentVolumeClaimVolumeSource': 'claimName=1 readOnly=2:bool',
  'core.PhotonPersistentDiskVolumeSource': 'pdID=1 fsType=2',
  'core.Pod': 'metadata=1:meta.ObjectMeta spec=2:core.PodSpec status=3:core.PodStatus',
  'core.PodAffinity':
    'requiredDuringSchedulingIgnoredDuringExecution=1:core.PodAffinityTerm* preferredDuringSchedulingIgnoredDuringExecution=2:core.WeightedPodAffinityTerm*',
  'core.PodAffinityTerm':
    'labelSelector=1:meta.LabelSelector namespaces=2* topologyKey=3 namespaceSelector=4:meta.LabelSelector matchLabelKeys=5* mismatchLabelKeys=6*',
  'core.PodAntiAffinity':
    'requiredDuringSchedulingIgnoredDuringExecution=1:core.PodAffinityTerm* preferredDuringSchedulingIgnoredDuringExecution=2:core.WeightedPodAffinityTerm*',
  'core.PodCondition':
    'type=1 observedGeneration=7:int64 status=2 lastProbeTime=3:Time lastTransitionTime=4:Time reason=5 message=6',
  'core.PodDNSConfig': 'nameservers=1* searches=2* options=3:core.PodDNSConfigOption*',
  'core.PodDNSConfigOption': 'name=1 value=2',
  'core.PodIP': 'ip=1',
  'core.PodOS': 'name=1',
  'core.PodReadinessGate': 'conditionType=1',
  'core.PodResourceClaim': 'name=1 resourceClaimName=3 resourceClaimTemplateName=4',
  'core.PodResourceClaimStatus': 'name=1 resourceClaimName=2',
  'core.PodSchedulingGate': 'name=1',
  'core.PodSecurityContext':
    'seLinuxOptions=1:core.SELinuxOptions windowsOptions=8:core.WindowsSecurityContextOptions runAsUser!=2:int64 runAsGroup!=6:int64 runAsNonRoot!=3:bool supplementalGroups=4:int64* supplementalGroupsPolicy=12 fsGroup!=5:int64 sysctls=7:core.Sysctl* fsGroupChangePolicy=9 seccompProfile=10:core.SeccompProfile appArmorProfile=11:core.AppArmorProfile seLinuxChangePolicy=13',
  'core.PodSpec':
    'volumes=1:core.Volume* initContainers=20:core.Container* containers=2:core.Container* ephemeralContainers=34:core.EphemeralContainer* restartPolicy=3 terminationGracePeriodSeconds!=4:int64 activeDeadlineSeconds!=5:int64 dnsPolicy=6 nodeSelector=7:map serviceAccountName=8 serviceAccount=9 automountServiceAccountToken!=21:bool nodeName=10 hostNetwork=11:bool hostPID=12:bool hostIPC=13:bool shareProcessNamespace!=27:bool securityContext=14:core.PodSecurityContext imagePullSecrets=15:core.LocalObjectReference* hostname=16 subdomain=17 affinity=18:core.Affinity schedulerName=19 tolerations=22:core.Toleration* hostAliases=23:core.HostAlias* priorityClassName=24 priority!=25:int32 dnsConfig=26:core.PodDNSConfig readinessGates=28:core.PodReadinessGate* runtimeClassName=29 enableServiceLinks!=30:bool preemptionPolicy=31 overhead=32:map:Quantity topologySpreadConstraints=33:core.TopologySpreadConstraint* setHostnameAsFQDN!=35:bool os=36:core.PodOS hostUsers!=37:bool schedulingGates=38:core.PodSchedulingGate* resourceClaims=39:core.PodResourceClaim* resources=40:core.ResourceRequirements',
  'core.PodStatus':
    'observedGeneration=17:int64 phase=1 conditions=2:core.PodCondition* message=3 reason=4 nominatedNodeName=11 hostIP=5 hostIPs=16:core.HostIP* podIP=6 podIPs=12:core.PodIP* startTime=7:Time initContainerStatuses=10:core.ContainerStatus* containerStatuses=8:core.ContainerStatus* qosClass=9 ephemeralContainerStatuses=13:core.ContainerStatus* resize=14 resourceClaimStatuses=15:core.PodResourceClaimStatus*',
  'core.PodTemplateSpec': 'metadata=1:meta.ObjectMeta spec=2:core.PodSpec',
  'core.PortStatus': 'port=1:int32 protocol=2 error=3',
  'core.PortworxVolumeSource': 'volumeID=1 fsType=2 readOnly=3:bool',
  'core.PreferredSchedulingTerm': 'weight=1:int32 preference=2:core.NodeSelectorTerm',
  'core.Probe':
    '...=1:core.ProbeHandler initialDelaySeconds=2:int32 timeoutSeconds=3:int32 periodSeconds=4:int32 successThreshold=5:int32 failureThreshold=6:int32 terminationGracePeriodSeconds!=7:int64',
  'core.ProbeHandler':
    'exec=1:core.ExecAction httpGet=2:core.HTTPGetAction tcpSocket=3:core.TCPSocketAction grpc=4:core.GRPCAction',
  'core.ProjectedVolumeSource': 'sources=1:core.VolumeProjection* defaultMode!=2:int32',
  'core.QuobyteVolumeSource': 'registry=1 volume=2 readOnly=3:bool user=4 group=5 tenant=6',
  'core.RBDVolumeSource':
    'monitors=1* image=2 fsType=3 pool=4 user=5 keyring=6 secretRef=7:core.LocalObjectReference readOnly=8:bool',
  'core.ResourceClaim': 'name=1 request=2',
  'core.ResourceFieldSelector': 'containerName=1 resource=2 divisor=3:Quantity',
  'core.ResourceHealth': 'resourceID=1 health=2',
  'core.ResourceQuota':
    'metadata=1:meta.ObjectMeta spec=2:core.ResourceQuotaSpec status=3:core.ResourceQuotaStatus',
  'core.ResourceQuotaSpec': 'hard=1:map:Quantity scopes=2* scopeSelector=3:core.ScopeSelector',
  'core.ResourceQuotaStatus': 'hard=1:map:Quantity used=2:map:Quantity',
  'core.ResourceRequirements': 'limits=1:map:Quantity requests=2:map:Quantity claims=3:core.ResourceClaim*',
  'core.ResourceStatus': 'name=1 resources=2:core.ResourceHealth*',
  'core.SELinuxOptions': 'user=1 role=2 type=3 level=4',
  'core.ScaleIOVolumeSource':
    'gateway=1 system=2 secretRef=3:core.LocalObjectReference sslEnabled=4:bool protectionDomain=5 storagePool=6 storageMode=7 volumeName=8 fsType=9 readOnly=10:bool',
  'core.ScopeSelector': 'matchExpressions=1:core.ScopedResourceSelectorRequirement*',
  'core.ScopedResourceSelectorRequirement': 'scopeName=1 operator=2 values=3*',
  'core.SeccompProfile': 'type=1 localhostProfile=2',
  'core.Secret': 'metadata=1:meta.ObjectMeta immutable!=5:bool data=2:map:bytes stringData=4:map type=3',
  'core.SecretEnvSource': '...=1:core.LocalObjectReference optional=2:bool',
  'core.SecretKeySelector': '...=1:core.LocalObjectReference key=2 optional=3:bool',
  'core.SecretProjection': '...=1:core.LocalObjectReference items=2:core.KeyToPath* optional=4:bool',
  'core.SecretVolumeSource': 'secretName=1 items=2:core.KeyToPath* defaultMode!=3:int32 optional=4:bool',
  'core.SecurityContext':
    'capabilities=1:core.Capabilities privileged!=2:bool seLinuxOptions=3:core.SELinuxOptions windowsOptions=10:core.WindowsSecurityContextOptions runAsUser!=4:int64 runAsGroup!=8:int64 runAsNonRoot!=5:bool readOnlyRootFilesystem!=6:bool allowPrivilegeEscalation!=7:bool procMount=9 seccompProfile=11:core.SeccompProfile appArmorProfile=12:core.AppArmorProfile',
  'core.Service': 'metadata=1:meta.ObjectMeta spec=2:core.ServiceSpec status=3:core.ServiceStatus',
  'core.ServiceAccount':
    'metadata=1:meta.ObjectMeta secrets=2:core.ObjectReference* imagePullSecrets=3:core.LocalObjectReference* automountServiceAccountToken!=4:bool',
  'core.ServiceAccountTokenProjection': 'audience=1 expirationSeconds!=2:int64 path=3',
  'core.ServicePort':
    'name=1 protocol=2 appProtocol=6 port!=3:int32 targetPort=4:IntOrString nodePort=5:int32',
  'core.ServiceSpec':
    'ports=1:core.ServicePort* selector=2:map clusterIP=3 clusterIPs=18* type=4 externalIPs=5* sessionAffinity=7 loadBalancerIP=8 loadBalancerSourceRanges=9* externalName=10 externalTrafficPolicy=11 healthCheckNodePort=12:int32 publishNotReadyAddresses=13:bool sessionAffinityConfig=14:core.SessionAffinityConfig ipFamilies=19* ipFamilyPolicy=17 allocateLoadBalancerNodePorts!=20:bool loadBalancerClass=21 internalTrafficPolicy=22 trafficDistribution=23',
  'core.ServiceStatus': 'loadBalancer=1:core.LoadBalancerStatus conditions=2:meta.Condition*',
  'core.SessionAffinityConfig': 'clientIP=1:core.ClientIPConfig',
  'core.SleepAction': 'seconds=1:int64',
  'core.StorageOSVolumeSource':
    'volumeName=1 volumeNamespace=2 fsType=3 readOnly=4:bool secretRef=5:core.LocalObjectReference',
  'core.Sysctl': 'name=1 value=2',
  'core.TCPSocketAction': 'port=1:IntOrString host=2',
  'core.Taint': 'key=1 value=2 effect=3 timeAdded=4:Time',
  'core.Toleration': 'key=1 operator=2 value=3 effect=4 tolerationSeconds!=5:int64',
  'core.TopologySpreadConstraint':
    'maxSkew=1:int32 topologyKey=2 whenUnsatisfiable=3 labelSelector=4:meta.LabelSelector minDomains=5:int32 nodeAffinityPolicy=6 nodeTaintsPolicy=7 matchLabelKeys=8*',
  'core.TypedLocalObjectReference': 'apiGroup=1 kind=2 name=3',
  'core.TypedObjectReference': 'apiGroup=1 kind=2 name=3 namespace=4',
  'core.Volume': 'name=1 ...=2:core.VolumeSource',
  'core.VolumeDevice': 'name=1 devicePath=2',
  'core.VolumeMount':
    'name=1 readOnly=2:bool recursiveReadOnly=7 mountPath=3 subPath=4 mountPropagation=5 subPathExpr=6',
  'core.VolumeMountStatus': 'name=1 mountPath=2 readOnly=3:bool recursiveReadOnly=4',
  'core.VolumeProjection':
    'secret=1:core.SecretProjection downwardAPI=2:core.DownwardAPIProjection configMap=3:core.ConfigMapProjection serviceAccountToken=4:core.ServiceAccountTokenProjection clusterTrustBundle=5:core.ClusterTrustBundleProjection',
  'core.VolumeResourceRequirements': 'limits=1:map:Quantity requests=2:map:Quantity',
  'core.VolumeSource':
    'hostPath=1:core.HostPathVolumeSource emptyDir=2:core.EmptyDirVolumeSource gcePersistentDisk=3:core.GCEPersistentDiskVolumeSource awsElasticBlockStore=4:core.AWSElasticBlockStoreVolumeSource gitRepo=5:core.GitRepoVolumeSource secret=6:core.SecretVolumeSource nfs=7:core.NFSVolumeSource iscsi=8:core.ISCSIVolumeSource glusterfs=9:core.GlusterfsVolumeSource persistentVolumeClaim=10:core.PersistentVolumeClaimVolumeSource rbd=11:core.RBDVolumeSource flexVolume=12:core.FlexVolumeSource cinder=13:core.CinderVolumeSource cephfs=14:core.CephFSVolumeSource flocker=15:core.FlockerVolumeSource downwardAPI=16:core.DownwardAPIVolumeSource fc=17:core.FCVolumeSource azureFile=18:core.AzureFileVolumeSource configMap=19:core.ConfigMapVolumeSource vsphereVolume=20:core.VsphereVirtualDiskVolumeSource quobyte=21:core.QuobyteVolumeSource azureDisk=22:core.AzureDiskVolumeSource photonPersistentDisk=23:core.PhotonPersistentDiskVolumeSource projected=26:core.ProjectedVolumeSource portworxVolume=24:core.PortworxVolumeSource scaleIO=25:core.ScaleIOVolumeSource storageos=27:core.StorageOSVolumeSource csi=28:core.CSIVolumeSource ephemeral=29:core.EphemeralVolumeSource image=30:core.ImageVolumeSource',
  'core.VsphereVirtualDiskVolumeSource': 'volumePath=1 fsType=2 storagePolicyName=3 storagePolicyID=4',
  'core.WeightedPodAffinityTerm': 'weight=1:int32 podAffinityTerm=2:core.PodAffinityTerm',
  'core.WindowsSecurityContextOptions':
    'gmsaCredentialSpecName=1 gmsaCredentialSpec=2 runAsUserName=3 hostProcess=4:bool',
  'discovery.Endpoint':
    'addresses=1* conditions=2:discovery.EndpointConditions hostname=3 targetRef=4:core.ObjectReference deprecatedTopology=5:map nodeName=6 zone=7 hints=8:discovery.EndpointHints',
  'discovery.EndpointConditions': 'ready!=1:bool serving!=2:bool terminating!=3:bool',
  'discovery.EndpointHints': 'forZones=1:discovery.ForZone* forNodes=2:discovery.ForNode*',
  'discovery.EndpointPort': 'name=1 protocol=2 port!=3:int32 appProtocol=4',
  'discovery.EndpointSlice':
    'metadata=1:meta.ObjectMeta addressType=4 endpoints=2:discovery.Endpoint* ports=3:discovery.EndpointPort*',
  'discovery.ForNode': 'name=1',
  'discovery.ForZone': 'name=1',
  'events.Event':
    'metadata=1:meta.ObjectMeta eventTime=2:MicroTime series=3:events.EventSeries reportingController=4 reportingInstance=5 action=6 reason=7 regarding=8:core.ObjectReference related=9:core.ObjectReference note=10 type=11 deprecatedSource=12:core.EventSource deprecatedFirstTimestamp=13:Time deprecatedLastTimestamp=14:Time deprecatedCount=15:int32',
  'events.EventSeries': 'count=1:int32 lastObservedTime=2:MicroTime',
  'meta.Condition': 'type=1 status=2 observedGeneration=3:int64 lastTransitionTime=4:Time reason=5 message=6',
  'meta.DeleteOptions':
    'gracePeriodSeconds!=1:int64 preconditions=2:meta.Preconditions orphanDependents!=3:bool propagationPolicy=4 dryRun=5* ignoreStoreReadErrorWithClusterBreakingPotential=6:bool',
  'meta.LabelSelector': 'matchLabels=1:map matchExpressions=2:meta.LabelSelectorRequirement*',
  'meta.LabelSelectorRequirement': 'key=1 operator=2 values=3*',
  'meta.ManagedFieldsEntry':
    'manager=1 operation=2 apiVersion=3 time=4:Time fieldsType=6 fieldsV1=7:FieldsV1 subresource=8',
  'meta.ObjectMeta':
    'name=1 generateName=2 namespace=3 selfLink=4 uid=5 resourceVersion=6 generation=7:int64 creationTimestamp=8:Time deletionTimestamp=9:Time deletionGracePeriodSeconds=10:int64 labels=11:map annotations=12:map ownerReferences=13:meta.OwnerReference* finalizers=14* managedFields=17:meta.ManagedFieldsEntry*',
  'meta.OwnerReference': 'apiVersion=5 kind=1 name=3 uid=4 controller!=6:bool blockOwnerDeletion!=7:bool',
  'meta.Preconditions': 'uid=1 resourceVersion=2',
  'networking.HTTPIngressPath': 'path=1 pathType=3 backend=2:networking.IngressBackend',
  'networking.HTTPIngressRuleValue': 'paths=1:networking.HTTPIngressPath*',
  'networking.IPBlock': 'cidr=1 except=2*',
  'networking.Ingress':
    'metadata=1:meta.ObjectMeta spec=2:networking.IngressSpec status=3:networking.IngressStatus',
  'networking.IngressBackend':
    'service=4:networking.IngressServiceBackend resource=3:core.TypedLocalObjectReference',
  'networking.IngressLoadBalancerIngress': 'ip=1 hostname=2 ports=4:networking.IngressPortStatus*',
  'networking.IngressLoadBalancerStatus': 'ingress=1:networking.IngressLoadBalancerIngress*',
  'networking.IngressPortStatus': 'port=1:int32 protocol=2 error=3',
  'networking.IngressRule': 'host=1 ...=2:networking.IngressRuleValue',
  'networking.IngressRuleValue': 'http=1:networking.HTTPIngressRuleValue',
  'networking.IngressServiceBackend': 'name=1 port=2:networking.ServiceBackendPort',
  'networking.IngressSpec':
    'ingressClassName=4 defaultBackend=1:networking.IngressBackend tls=2:networking.IngressTLS* rules=3:networking.IngressRule*',
  'networking.IngressStatus': 'loadBalancer=1:networking.IngressLoadBalancerStatus',
  'networking.IngressTLS': 'hosts=1* secretName=2',
  'networking.NetworkPolicy': 'metadata=1:meta.ObjectMeta spec=2:networking.NetworkPolicySpec',
  'networking.NetworkPolicyEgressRule':
    'ports=1:networking.NetworkPolicyPort* to=2:networking.NetworkPolicyPeer*',
  'networking.NetworkPolicyIngressRule':
    'ports=1:networking.NetworkPolicyPort* from=2:networking.NetworkPolicyPeer*',
  'networking.NetworkPolicyPeer':
    'podSelector=1:meta.LabelSelector namespaceSelector=2:meta.LabelSelector ipBlock=3:networking.IPBlock',
  'networking.NetworkPolicyPort': 'protocol=1 port=2:IntOrString endPort=3:int32',
  'networking.NetworkPolicySpec':
    'podSelector=1:meta.LabelSelector ingress=2:networking.NetworkPolicyIngressRule* egress=3:networking.NetworkPolicyEgressRule* policyTypes=4*',
  'networking.ServiceBackendPort': 'name=1 number=2:int32',
  'policy.Eviction': 'metadata=1:meta.ObjectMeta deleteOptions=2:meta.DeleteOptions',
  'policy.PodDisruptionBudget':
    'metadata=1:meta.ObjectMeta spec=2:policy.PodDisruptionBudgetSpec status=3:policy.PodDisruptionBudgetStatus',
  'policy.PodDisruptionBudgetSpec':
    'minAvailable=1:IntOrString selector=2:meta.LabelSelector maxUnavailable=3:IntOrString unhealthyPodEvictionPolicy=4',
  'policy.PodDisruptionBudgetStatus':
    'observedGeneration=1:int64 disruptedPods=2:map:Time disruptionsAllowed!=3:int32 currentHealthy!=4:int32 desiredHealthy!=5:int32 expectedPods!=6:int32 conditions=7:meta.Condition*',
  'rbac.AggregationRule': 'clusterRoleSelectors=1:meta.LabelSelector*',
  'rbac.ClusterRole':
    'metadata=1:meta.ObjectMeta rules=2:rbac.PolicyRule* aggregationRule=3:rbac.AggregationRule',
  'rbac.ClusterRoleBinding': 'metadata=1:meta.ObjectMeta subjects=2:rbac.Subject* roleRef=3:rbac.RoleRef',
  'rbac.PolicyRule': 'verbs=1* apiGroups=2* resources=3* resourceNames=4* nonResourceURLs=5*',
  'rbac.Role': 'metadata=1:meta.ObjectMeta rules=2:rbac.PolicyRule*',
  'rbac.RoleBinding': 'metadata=1:meta.ObjectMeta subjects=2:rbac.Subject* roleRef=3:rbac.RoleRef',
  'rbac.RoleRef': 'apiGroup=1 kind=2 name=3',
  'rbac.Subject': 'kind=1 apiGroup=2 name=3 namespace=4',
  'scheduling.PriorityClass':
    'metadata=1:meta.ObjectMeta value!=2:int32 globalDefault=3:bool description=4 preemptionPolicy=5',
};

/** The message of each kind a client may send, by `apiVersion` and kind. */
const KINDS: Record<string, string> = {
  'v1/Namespace': 'core.Namespace',
  'v1/Secret': 'core.Secret',
  'v1/ConfigMap': 'core.ConfigMap',
  'v1/ServiceAccount': 'core.ServiceAccount',
  'v1/Service': 'core.Service',
  'v1/Pod': 'core.Pod',
  'v1/Node': 'core.Node',
  'v1/Endpoints': 'core.Endpoints',
  'v1/Event': 'core.Event',
  'v1/ResourceQuota': 'core.ResourceQuota',
  'apps/v1/Deployment': 'apps.Deployment',
  'apps/v1/DaemonSet': 'apps.DaemonSet',
  'batch/v1/Job': 'batch.Job',
  'batch/v1/CronJob': 'batch.CronJob',
  'rbac.authorization.k8s.io/v1/Role': 'rbac.Role',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'rbac.RoleBinding',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'rbac.ClusterRole',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'rbac.ClusterRoleBinding',
  'policy/v1/PodDisruptionBudget': 'policy.PodDisruptionBudget',
  'policy/v1/Eviction': 'policy.Eviction',
  'networking.k8s.io/v1/Ingress': 'networking.Ingress',
  'networking.k8s.io/v1/NetworkPolicy': 'networking.NetworkPolicy',
  'scheduling.k8s.io/v1/PriorityClass': 'scheduling.PriorityClass',
  'authentication.k8s.io/v1/TokenRequest': 'authentication.TokenRequest',
  'coordination.k8s.io/v1/Lease': 'coordination.Lease',
  'discovery.k8s.io/v1/EndpointSlice': 'discovery.EndpointSlice',
  'events.k8s.io/v1/Event': 'events.Event',
  // DeleteOptions is registered in every group; clients name the group of the resource.
  'meta.k8s.io/v1/DeleteOptions': 'meta.DeleteOptions',
};

export type FieldType =
  | { kind: 'scalar'; scalar: Scalar }
  | { kind: 'special'; special: Special }
  | { kind: 'message'; message: string }
  | { kind: 'map'; value: FieldType };

export type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'double' | 'bytes';
export type Special = 'Time' | 'MicroTime' | 'Duration' | 'IntOrString' | 'Quantity' | 'Raw' | 'FieldsV1';

export interface FieldDef {
  /** JSON name; undefined for an embedded struct whose fields join the parent. */
  name: string | undefined;
  number: number;
  type: FieldType;
  repeated: boolean;
  keepZero: boolean;
}

export type MessageDef = ReadonlyMap<number, FieldDef>;

const SCALARS = new Set<string>(['string', 'bool', 'int32', 'int64', 'double', 'bytes']);
const SPECIALS = new Set<string>([
  'Time',
  'MicroTime',
  'Duration',
  'IntOrString',
  'Quantity',
  'Raw',
  'FieldsV1',
]);

function fieldType(t: string, owner: string): FieldType {
  if (t.startsWith('map')) return { kind: 'map', value: fieldType(t.slice(4) || 'string', owner) };
  if (SCALARS.has(t)) return { kind: 'scalar', scalar: t as Scalar };
  if (SPECIALS.has(t)) return { kind: 'special', special: t as Special };
  if (!(t in MESSAGES)) throw new Error(`protobuf schema: ${owner} refers to unknown message ${t}`);
  return { kind: 'message', message: t };
}

function parseMessage(name: string, spec: string): MessageDef {
  const fields = new Map<number, FieldDef>();
  for (const f of spec.split(' ')) {
    const m = /^(\.\.\.|\w+)(!?)=(\d+)(?::([\w.:]+))?(\*?)$/.exec(f);
    if (!m) throw new Error(`protobuf schema: bad field ${JSON.stringify(f)} in ${name}`);
    const [, fname = '', bang, num, type, star] = m;
    fields.set(Number(num), {
      name: fname === '...' ? undefined : fname,
      number: Number(num),
      type: fieldType(type ?? 'string', name),
      repeated: star === '*',
      keepZero: bang === '!',
    });
  }
  return fields;
}

const parsed = new Map<string, MessageDef>();

/** A message of the table, parsed on first use. */
export function messageDef(name: string): MessageDef {
  let def = parsed.get(name);
  if (!def) {
    const spec = MESSAGES[name];
    if (spec === undefined) throw new Error(`protobuf schema: no message ${name}`);
    def = parseMessage(name, spec);
    parsed.set(name, def);
  }
  return def;
}

/** Every message name of the table (tests check them against the compiled descriptors). */
export function messageNames(): string[] {
  return Object.keys(MESSAGES);
}

/** The message of a kind, or undefined when the emulator has no schema for it. */
export function messageForKind(apiVersion: string, kind: string): string | undefined {
  if (kind === 'DeleteOptions') return 'meta.DeleteOptions';
  return KINDS[`${apiVersion}/${kind}`];
}

/** The messages that are kinds (carry apiVersion and kind in JSON). */
export function kindMessages(): Set<string> {
  return new Set(Object.values(KINDS));
}

/** The kinds the emulator decodes from protobuf, as `apiVersion/Kind` (for docs and errors). */
export function protobufKinds(): string[] {
  return Object.keys(KINDS);
}
