#!/usr/bin/python3
"""Checks the emulator with botocore's own clients, so its answers are known to parse the way an AWS SDK parses real
AWS answers (the C tests check the provider against the emulator; this checks the emulator against botocore).

Usage: test_emulator_botocore.py DATA_DIR
"""
import json
import os
import subprocess
import sys
import unittest
import urllib.request

import botocore.exceptions
import botocore.session

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = None
KEY, SECRET = "AKIDEMULATOR", "emulator/secret/key+EXAMPLE"


class EmulatorWithBotocore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "aws_emulator.py"), "--data-dir", DATA_DIR],
                                    stdout=subprocess.PIPE, text=True)
        line = cls.proc.stdout.readline()
        cls.url = "http://127.0.0.1:" + line.split()[1]
        cls.session = botocore.session.get_session()

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(10)
        cls.proc.stdout.close()

    def client(self, service, secret=SECRET):
        return self.session.create_client(service, region_name="us-east-1", endpoint_url=self.url,
                                          aws_access_key_id=KEY, aws_secret_access_key=secret)

    def test_instance_types_paginate_over_the_catalog(self):
        with open(os.path.join(DATA_DIR, "aws-prices-us-east-1.json"), encoding="utf-8") as f:
            priced = set(json.load(f))
        pages = list(self.client("ec2").get_paginator("describe_instance_types").paginate(PaginationConfig={
            "PageSize": 100}))
        names = [t["InstanceType"] for p in pages for t in p["InstanceTypes"]]
        self.assertEqual(len(names), len(set(names)))
        self.assertTrue(set(names) <= priced)
        self.assertGreater(len(pages), 10)
        m5 = next(t for p in pages for t in p["InstanceTypes"] if t["InstanceType"] == "m5.large")
        self.assertEqual(m5["VCpuInfo"]["DefaultVCpus"], 2)
        self.assertEqual(m5["MemoryInfo"]["SizeInMiB"], 8192)

    def test_fleet_idempotency_tags_and_termination(self):
        ec2 = self.client("ec2")
        lt = ec2.create_launch_template(LaunchTemplateName="botocore-check",
                                        LaunchTemplateData={"ImageId": "ami-0e000000000000a64"})["LaunchTemplate"]
        args = dict(Type="instant", ClientToken="botocore-token",
                    TargetCapacitySpecification={"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"},
                    LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateId": lt["LaunchTemplateId"],
                                                                            "Version": "1"},
                                            "Overrides": [{"InstanceType": "c5.large",
                                                           "SubnetId": "subnet-0e000000000000000"}]}],
                    TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "owner", "Value": "botocore"}]}])
        first = ec2.create_fleet(**args)["Instances"][0]["InstanceIds"][0]
        again = ec2.create_fleet(**args)["Instances"][0]["InstanceIds"][0]
        self.assertEqual(first, again)
        found = ec2.describe_instances(Filters=[{"Name": "tag:owner", "Values": ["botocore"]}])["Reservations"]
        self.assertEqual([i["InstanceId"] for r in found for i in r["Instances"]], [first])
        changed = ec2.terminate_instances(InstanceIds=[first])["TerminatingInstances"][0]
        self.assertEqual(changed["CurrentState"]["Name"], "shutting-down")
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            ec2.terminate_instances(InstanceIds=["i-0000000000000dead"])
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidInstanceID.NotFound")

    def test_launch_templates_listed_by_cluster_tag_and_deleted(self):
        """What aws.so's sweep of unused launch templates calls: DescribeLaunchTemplates on the cluster's tag, page by
        page, and DeleteLaunchTemplate by ID, whose NotFound code the sweep takes as already gone."""
        ec2 = self.client("ec2")

        def create(name, cluster):
            tags = [{"ResourceType": "launch-template", "Tags": [{"Key": "karpenter.k8s.aws/cluster", "Value": cluster}]}]
            return ec2.create_launch_template(LaunchTemplateName=name, TagSpecifications=tags,
                                              LaunchTemplateData={"ImageId": "ami-0e000000000000a64"})["LaunchTemplate"]

        ours = [create("nodesmith/sweep/a/1", "sweep"), create("nodesmith/sweep/a/2", "sweep")]
        create("nodesmith/other/a/1", "other")

        def listed():
            pages = ec2.get_paginator("describe_launch_templates").paginate(
                Filters=[{"Name": "tag:karpenter.k8s.aws/cluster", "Values": ["sweep"]}],
                PaginationConfig={"PageSize": 1})
            return sorted(t["LaunchTemplateId"] for p in pages for t in p["LaunchTemplates"])

        self.assertEqual(listed(), sorted(t["LaunchTemplateId"] for t in ours))
        gone = ec2.delete_launch_template(LaunchTemplateId=ours[0]["LaunchTemplateId"])["LaunchTemplate"]
        self.assertEqual(gone["LaunchTemplateName"], "nodesmith/sweep/a/1")
        self.assertEqual(listed(), [ours[1]["LaunchTemplateId"]])
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            ec2.delete_launch_template(LaunchTemplateId=ours[0]["LaunchTemplateId"])
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidLaunchTemplateId.NotFound")

    def test_wrong_secret_is_signature_does_not_match(self):
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            self.client("ec2", secret="wrong").describe_availability_zones()
        self.assertEqual(caught.exception.response["Error"]["Code"], "SignatureDoesNotMatch")

    def test_sqs_ssm_pricing_and_sts(self):
        sqs = self.client("sqs")
        url = sqs.get_queue_url(QueueName="nodesmith-interruptions")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        self.assertEqual(got[0]["Body"], "hello")
        sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
        value = self.client("ssm").get_parameter(
            Name="/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id")
        self.assertEqual(value["Parameter"]["Value"], "ami-0e000000000000a64")
        products = self.client("pricing").get_products(
            ServiceCode="AmazonEC2", Filters=[{"Type": "TERM_MATCH", "Field": "instanceType", "Value": "m5.large"}])
        self.assertIn("0.0960000000", products["PriceList"][0])
        self.assertEqual(self.client("sts").get_caller_identity()["Account"], "111122223333")

    def test_eks_describe_cluster(self):
        eks = self.client("eks")
        cluster = eks.describe_cluster(name="demo")["cluster"]
        self.assertTrue(cluster["endpoint"].startswith("https://"))
        self.assertEqual(cluster["kubernetesNetworkConfig"]["serviceIpv4Cidr"], "10.100.0.0/16")
        self.assertTrue(cluster["certificateAuthority"]["data"])
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            eks.describe_cluster(name="nowhere")
        self.assertEqual(caught.exception.response["Error"]["Code"], "ResourceNotFoundException")

    def test_images_by_owner_and_name_pattern(self):
        ec2 = self.client("ec2")
        images = ec2.describe_images(Owners=["self"], Filters=[{"Name": "name", "Values": ["team-golden-*"]}])
        self.assertEqual([m["ImageId"] for m in images["Images"]], ["ami-0e00000000000c64"])
        self.assertEqual(ec2.describe_images(Owners=["amazon"], Filters=[{"Name": "name",
                                                                          "Values": ["team-golden-*"]}])["Images"], [])
        ssm = self.client("ssm")
        for name, image in [("/aws/service/bottlerocket/aws-k8s-1.30/arm64/latest/image_id", "ami-0e00000000000b32"),
                            ("/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.30/"
                             "image_id", "ami-0e0000000000w222")]:
            self.assertEqual(ssm.get_parameter(Name=name)["Parameter"]["Value"], image)

    def test_fleet_strategy_profiles_and_groups(self):
        ec2 = self.client("ec2")
        data = {"ImageId": "ami-0e000000000000a64", "SecurityGroupIds": ["sg-0e000000000000001"],
                "IamInstanceProfile": {"Name": "KarpenterNodeRole-demo"}}
        lt = ec2.create_launch_template(LaunchTemplateName="botocore-groups", LaunchTemplateData=data)["LaunchTemplate"]
        configs = [{"LaunchTemplateSpecification": {"LaunchTemplateId": lt["LaunchTemplateId"], "Version": "$Latest"},
                    "Overrides": [{"InstanceType": "m5.large", "SubnetId": "subnet-0e000000000000000"}]}]
        spot = {"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "spot"}
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            ec2.create_fleet(Type="instant", TargetCapacitySpecification=spot, LaunchTemplateConfigs=configs,
                             SpotOptions={"AllocationStrategy": "prioritized"})
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidParameterValue")
        fleet = ec2.create_fleet(Type="instant", TargetCapacitySpecification=spot, LaunchTemplateConfigs=configs,
                                 SpotOptions={"AllocationStrategy": "price-capacity-optimized"})
        iid = fleet["Instances"][0]["InstanceIds"][0]
        found = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
        self.assertEqual([g["GroupId"] for g in found["SecurityGroups"]], ["sg-0e000000000000001"])
        self.assertEqual(found["InstanceLifecycle"], "spot")
        data["IamInstanceProfile"] = {"Name": "NoSuchProfile"}
        bad = ec2.create_launch_template(LaunchTemplateName="botocore-bad-profile",
                                         LaunchTemplateData=data)["LaunchTemplate"]
        configs[0]["LaunchTemplateSpecification"]["LaunchTemplateId"] = bad["LaunchTemplateId"]
        refused = ec2.create_fleet(Type="instant", TargetCapacitySpecification=spot, LaunchTemplateConfigs=configs)
        self.assertEqual(refused["Instances"], [])
        self.assertEqual(refused["Errors"][0]["ErrorCode"], "InvalidParameterValue")

    def control(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as answer:
            return json.load(answer)

    def test_capacity_reservations_describe_and_launch(self):
        ec2 = self.client("ec2")
        one = self.control("/_emulator/capacity_reservations", {
            "instance_type": "c5.xlarge", "zone": "us-east-1b", "count": 1, "tags": {"team": "botocore"},
            "end_date": "2031-01-01T00:00:00.000Z"})["id"]
        other = self.control("/_emulator/capacity_reservations", {
            "instance_type": "c5.xlarge", "zone": "us-east-1a", "count": 3, "available": 0,
            "owner": "444455556666", "tags": {"team": "botocore"}})["id"]
        found = ec2.describe_capacity_reservations(CapacityReservationIds=[one])["CapacityReservations"]
        self.assertEqual(len(found), 1)
        r = found[0]
        self.assertEqual((r["InstanceType"], r["AvailabilityZone"], r["AvailabilityZoneId"]),
                         ("c5.xlarge", "us-east-1b", "ue1-az2"))
        self.assertEqual((r["TotalInstanceCount"], r["AvailableInstanceCount"], r["State"]), (1, 1, "active"))
        # (ReservationType and Interruptible are sent too; Debian's botocore 1.29 predates them)
        self.assertEqual((r["InstanceMatchCriteria"], r["OwnerId"]), ("targeted", "111122223333"))
        self.assertEqual(r["EndDate"].year, 2031)
        self.assertEqual(r["Tags"], [{"Key": "team", "Value": "botocore"}])
        by_tag = ec2.describe_capacity_reservations(Filters=[
            {"Name": "tag:team", "Values": ["botocore"]}, {"Name": "state", "Values": ["active"]},
            {"Name": "owner-id", "Values": ["444455556666"]}], MaxResults=1000)["CapacityReservations"]
        self.assertEqual([x["CapacityReservationId"] for x in by_tag], [other])
        pages = list(ec2.get_paginator("describe_capacity_reservations").paginate(
            Filters=[{"Name": "tag-key", "Values": ["team"]}], PaginationConfig={"PageSize": 1}))
        self.assertEqual(sorted(x["CapacityReservationId"] for p in pages for x in p["CapacityReservations"]),
                         sorted([one, other]))
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            ec2.describe_capacity_reservations(CapacityReservationIds=["cr-0000000000000dead"])
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidCapacityReservationId.NotFound")
        # a launch template targeting the reservation launches into it until it is full
        lt = ec2.create_launch_template(LaunchTemplateName="botocore-reserved", LaunchTemplateData={
            "ImageId": "ami-0e000000000000a64", "CapacityReservationSpecification": {
                "CapacityReservationPreference": "capacity-reservations-only",
                "CapacityReservationTarget": {"CapacityReservationId": one}}})["LaunchTemplate"]
        args = dict(Type="instant", TargetCapacitySpecification={"TotalTargetCapacity": 1,
                                                                 "DefaultTargetCapacityType": "on-demand"},
                    LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateId": lt["LaunchTemplateId"],
                                                                            "Version": "$Latest"},
                                            "Overrides": [{"InstanceType": "c5.xlarge",
                                                           "SubnetId": "subnet-0e000000000000001"}]}])
        iid = ec2.create_fleet(**args)["Instances"][0]["InstanceIds"][0]
        inst = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
        self.assertEqual(inst["CapacityReservationId"], one)
        self.assertEqual(inst["CapacityReservationSpecification"]["CapacityReservationPreference"],
                         "capacity-reservations-only")
        self.assertEqual(ec2.describe_capacity_reservations(CapacityReservationIds=[one])
                         ["CapacityReservations"][0]["AvailableInstanceCount"], 0)
        full = ec2.create_fleet(**args)
        self.assertEqual(full["Instances"], [])
        self.assertEqual(full["Errors"][0]["ErrorCode"], "ReservationCapacityExceeded")
        ec2.terminate_instances(InstanceIds=[iid])
        self.assertEqual(ec2.describe_capacity_reservations(CapacityReservationIds=[one])
                         ["CapacityReservations"][0]["AvailableInstanceCount"], 1)

    def test_instance_status_impaired_checks_and_events(self):
        """What aws.so's instance status poll calls, Karpenter's three filter sets, paged as botocore pages them;
        DescribeInstances narrowed to the impaired instances by the instance-id filter."""
        ec2 = self.client("ec2")
        lt = ec2.create_launch_template(LaunchTemplateName="botocore-status",
                                        LaunchTemplateData={"ImageId": "ami-0e000000000000a64"})["LaunchTemplate"]
        spec = {"LaunchTemplateSpecification": {"LaunchTemplateId": lt["LaunchTemplateId"], "Version": "1"},
                "Overrides": [{"InstanceType": "m5.large", "SubnetId": "subnet-0e000000000000000"}]}
        ids = [ec2.create_fleet(Type="instant", LaunchTemplateConfigs=[spec], TargetCapacitySpecification={
            "TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"})["Instances"][0]["InstanceIds"][0]
            for _ in range(3)]
        ec2.describe_instances(InstanceIds=ids)  # pending -> running
        self.control("/_emulator/instance_status", {"instance_id": ids[0], "systemStatus": "impaired",
                                                    "impaired_since": 1893456000})
        self.control("/_emulator/instance_status", {"instance_id": ids[1], "events": [
            {"code": "instance-retirement", "not_before": 1893459600}]})

        def listed(name, values):
            pages = ec2.get_paginator("describe_instance_status").paginate(
                Filters=[{"Name": name, "Values": values}], PaginationConfig={"PageSize": 5})
            return [x for p in pages for x in p["InstanceStatuses"]]

        impaired = listed("system-status.status", ["impaired"])
        self.assertEqual([x["InstanceId"] for x in impaired], [ids[0]])
        detail = impaired[0]["SystemStatus"]["Details"][0]
        self.assertEqual((impaired[0]["SystemStatus"]["Status"], detail["Name"], detail["Status"]),
                         ("impaired", "reachability", "failed"))
        self.assertEqual(detail["ImpairedSince"].year, 2030)
        self.assertEqual(impaired[0]["InstanceStatus"]["Details"][0]["Status"], "passed")
        self.assertEqual(impaired[0]["AvailabilityZone"], "us-east-1a")
        self.assertEqual(listed("instance-status.status", ["impaired"]), [])
        scheduled = listed("event.code", ["instance-reboot", "instance-retirement"])
        self.assertEqual([x["InstanceId"] for x in scheduled], [ids[1]])
        self.assertEqual(scheduled[0]["Events"][0]["Code"], "instance-retirement")
        self.assertEqual(scheduled[0]["Events"][0]["NotBefore"].hour, 1)
        # every running instance without filters; a stopped or terminated one only with IncludeAllInstances
        ec2.terminate_instances(InstanceIds=[ids[2]])
        ec2.describe_instances(InstanceIds=ids)  # shutting-down -> terminated
        running = {x["InstanceId"] for x in ec2.describe_instance_status(InstanceIds=ids)["InstanceStatuses"]}
        self.assertEqual(running, set(ids[:2]))
        everything = ec2.describe_instance_status(InstanceIds=ids, IncludeAllInstances=True)["InstanceStatuses"]
        self.assertEqual({x["InstanceId"]: x["InstanceState"]["Name"] for x in everything}[ids[2]], "terminated")
        found = ec2.describe_instances(Filters=[{"Name": "instance-id", "Values": [ids[0], "i-0000000000000dead"]}])
        self.assertEqual([i["InstanceId"] for r in found["Reservations"] for i in r["Instances"]], [ids[0]])
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            ec2.describe_instance_status(Filters=[{"Name": "no-such-filter", "Values": ["x"]}])
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidParameterValue")


if __name__ == "__main__":
    DATA_DIR = sys.argv.pop(1)
    unittest.main(verbosity=2)
